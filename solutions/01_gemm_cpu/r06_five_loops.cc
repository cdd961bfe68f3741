// gemm.06 — what changed: the GotoBLAS/BLIS five loops around the micro-kernel. Loop 5 takes MC
// rows of A, loop 4 a depth of KC and packs that MC×KC block of A (it lives in L3), loop 3 takes NC
// columns of B and packs that KC×NC block of B (it lives in L2), loop 2 takes one MR-row A
// micro-panel (it stays in L1) and loop 1 streams every NR-column B micro-panel past it from L2.
// Packing now costs O(mk + kn) per block and every packed float is reused from a near cache.
// Fringe tiles still fall back to scalar code (gemm.07 fixes that).
#include <algorithm>

#include "chapters/01_gemm_cpu/engine/engine.h"
#include "chapters/01_gemm_cpu/gemm.h"
#include "common/buffer.h"
#include "solutions/01_gemm_cpu/fringe.h"

namespace book::gemm {

void matmul_five_loops(int m, int n, int k, const float* a, int lda, const float* b, int ldb,
                       float* c, int ldc) {
  using namespace engine;
  const KernelSpec& ks = kAvx2Kernel;
  const int mr = ks.mr, nr = ks.nr;
  const Problem pr = plain(m, n, k, a, lda, b, ldb, c, ldc);
  AlignedBuffer<float> pa(static_cast<std::size_t>(ks.kc) * (ks.mc + mr));
  AlignedBuffer<float> pb(static_cast<std::size_t>(ks.kc) * (ks.nc + nr));
  //! [five-loops]
  for (int ic = 0; ic < m; ic += ks.mc) {  // loop 5: MC rows
    const int mc = std::min(ks.mc, m - ic);
    for (int pc = 0; pc < k; pc += ks.kc) {  // loop 4: KC depth
      const int kc = std::min(ks.kc, k - pc);
      const bool accumulate = pc > 0;
      pack_a(pr.a, ic, pc, mc, kc, mr, pa.data());  // MC×KC block of A: L3
      for (int jc = 0; jc < n; jc += ks.nc) {       // loop 3: NC columns
        const int nc = std::min(ks.nc, n - jc);
        pack_b(pr.b, pc, jc, kc, nc, nr, pb.data());  // KC×NC block of B: L2
        for (int ir = 0; ir < mc; ir += mr) {         // loop 2: an A micro-panel, in L1
          const float* a_panel = pa.data() + static_cast<std::size_t>(ir) * kc;
          for (int jr = 0; jr < nc; jr += nr) {  // loop 1: B micro-panels stream from L2
            const float* b_panel = pb.data() + static_cast<std::size_t>(jr) * kc;
            float* c_tile = c + static_cast<long>(ic + ir) * ldc + jc + jr;
            const int rows = std::min(mr, mc - ir), cols = std::min(nr, nc - jr);
            if (rows == mr && cols == nr)
              ks.fn(kc, a_panel, b_panel, c_tile, ldc, 1.0f, accumulate ? 1.0f : 0.0f);
            else
              solution::fringe_tile(rows, cols, kc, a_panel, mr, b_panel, nr, c_tile, ldc,
                                    accumulate);
          }
        }
      }
    }
  }
  //! [five-loops]
}

}  // namespace book::gemm
