// gemm.05 — what changed: A is copied into 6-row panels and B into 16-column panels, step-major,
// before the kernel runs. The kernel now streams two contiguous, aligned buffers: no row jumps, no
// TLB miss per step, and hardware prefetch sees one stream. No cache blocking yet: the whole of A
// and B is packed, and each B panel (k×16 floats) is reused across all rows from L2 at best.
#include <algorithm>

#include "chapters/01_gemm_cpu/engine/engine.h"
#include "chapters/01_gemm_cpu/gemm.h"
#include "common/buffer.h"
#include "solutions/01_gemm_cpu/fringe.h"

namespace book::gemm {

void matmul_packed(int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c,
                   int ldc) {
  using namespace engine;
  const KernelSpec& ks = kAvx2Kernel;
  const int mr = ks.mr, nr = ks.nr;
  const int m_pad = (m + mr - 1) / mr * mr, n_pad = (n + nr - 1) / nr * nr;
  AlignedBuffer<float> pa(static_cast<std::size_t>(m_pad) * k),
      pb(static_cast<std::size_t>(n_pad) * k);
  const Problem pr = plain(m, n, k, a, lda, b, ldb, c, ldc);
  pack_a(pr.a, 0, 0, m, k, mr, pa.data());
  pack_b(pr.b, 0, 0, k, n, nr, pb.data());
  for (int j = 0; j < n; j += nr) {
    const float* b_panel = pb.data() + static_cast<std::size_t>(j) * k;
    for (int i = 0; i < m; i += mr) {
      const float* a_panel = pa.data() + static_cast<std::size_t>(i) * k;
      const int rows = std::min(mr, m - i), cols = std::min(nr, n - j);
      if (rows == mr && cols == nr)
        ks.fn(k, a_panel, b_panel, c + i * ldc + j, ldc, 1.0f, 0.0f);
      else
        solution::fringe_tile(rows, cols, k, a_panel, mr, b_panel, nr, c + i * ldc + j, ldc, false);
    }
  }
}

}  // namespace book::gemm
