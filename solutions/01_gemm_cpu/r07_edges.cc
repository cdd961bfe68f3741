// gemm.07 — what changed: no scalar fringe. Packing pads the last micro-panels with zeros, so the
// kernel always runs on full MR×NR panels; a partial tile of C is computed into a small buffer and
// only its valid part is merged into C (macro_kernel in five_loops.cc). At n = 127, 29 of
// gemm.06's 176 tiles (12.5% of the flops) were scalar; here they cost what a full tile costs.
#include "chapters/01_gemm_cpu/engine/engine.h"
#include "chapters/01_gemm_cpu/gemm.h"

namespace book::gemm {

void matmul_edges(int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c,
                  int ldc) {
  engine::five_loops(engine::plain(m, n, k, a, lda, b, ldb, c, ldc), engine::kAvx2Kernel, 1);
}

}  // namespace book::gemm
