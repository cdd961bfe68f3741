// gemm.06 — what changed: the GotoBLAS/BLIS five loops around the micro-kernel. Loop 5 takes NC
// columns of B, loop 4 a depth of KC and packs that KC×NC block of B (it lives in L3), loop 3 takes
// MC rows and packs that MC×KC block of A (it lives in L2), loops 2 and 1 walk NR-wide B
// micro-panels (each stays in L1 while loop 1 sweeps it against every MR-row A micro-panel).
// Packing now costs O(mk + kn) per block and every packed float is reused MC/MR or NC/NR times from
// a near cache. Fringe tiles still fall back to scalar code (gemm.07 fixes that).
#include <algorithm>

#include "chapters/01_gemm_cpu/gemm.h"
#include "common/buffer.h"
#include "solutions/01_gemm_cpu/blis.h"
#include "solutions/01_gemm_cpu/fringe.h"

namespace book::gemm {

void matmul_five_loops(int m, int n, int k, const float* a, int lda, const float* b, int ldb,
                       float* c, int ldc) {
  using namespace detail;
  const KernelSpec& ks = kAvx2Kernel;
  const int mr = ks.mr, nr = ks.nr;
  const Problem pr = plain(m, n, k, a, lda, b, ldb, c, ldc);
  AlignedBuffer<float> pb(static_cast<std::size_t>(ks.kc) * (ks.nc + nr));
  AlignedBuffer<float> pa(static_cast<std::size_t>(ks.kc) * (ks.mc + mr));
  //! [five-loops]
  for (int jc = 0; jc < n; jc += ks.nc) {  // loop 5: NC columns
    const int nc = std::min(ks.nc, n - jc);
    for (int pc = 0; pc < k; pc += ks.kc) {  // loop 4: KC depth
      const int kc = std::min(ks.kc, k - pc);
      const bool accumulate = pc > 0;
      pack_b(pr.b, pc, jc, kc, nc, nr, pb.data());
      for (int ic = 0; ic < m; ic += ks.mc) {  // loop 3: MC rows
        const int mc = std::min(ks.mc, m - ic);
        pack_a(pr.a, ic, pc, mc, kc, mr, pa.data());
        for (int jr = 0; jr < nc; jr += nr) {  // loop 2: NR micro-panels of B
          const float* b_panel = pb.data() + static_cast<std::size_t>(jr) * kc;
          for (int ir = 0; ir < mc; ir += mr) {  // loop 1: MR micro-panels of A
            const float* a_panel = pa.data() + static_cast<std::size_t>(ir) * kc;
            float* c_tile = c + static_cast<long>(ic + ir) * ldc + jc + jr;
            const int rows = std::min(mr, mc - ir), cols = std::min(nr, nc - jr);
            if (rows == mr && cols == nr)
              ks.fn(kc, a_panel, b_panel, c_tile, ldc, 1.0f, accumulate ? 1.0f : 0.0f);
            else
              fringe_tile(rows, cols, kc, a_panel, mr, b_panel, nr, c_tile, ldc, accumulate);
          }
        }
      }
    }
  }
  //! [five-loops]
}

}  // namespace book::gemm
