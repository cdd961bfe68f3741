// gemm.02 — your turn: reorder the loops to i-k-j so the inner loop has unit stride in B and C.
// C = A·B, row-major, C overwritten and never read, nothing written past column n (see gemm.h).
#include "chapters/01_gemm_cpu/gemm.h"
#include "common/check.h"

namespace book::gemm {

void matmul_reorder(int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c,
                    int ldc) {
  (void)m, (void)n, (void)k, (void)a, (void)lda, (void)b, (void)ldb, (void)c, (void)ldc;
  BOOK_NOT_IMPLEMENTED("gemm.02", "exercises/01_gemm_cpu/r02_reorder.cc",
                       "chapters/01_gemm_cpu/README.md, section Rung 2: loop order");
}

}  // namespace book::gemm
