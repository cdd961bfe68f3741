// gemm.01 — your turn: the textbook i-j-k loops: one dot product per element of C.
// C = A·B, row-major, C overwritten and never read, nothing written past column n (see gemm.h).
#include "chapters/01_gemm_cpu/gemm.h"
#include "common/check.h"

namespace book::gemm {

void matmul_naive(int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c,
                  int ldc) {
  (void)m, (void)n, (void)k, (void)a, (void)lda, (void)b, (void)ldb, (void)c, (void)ldc;
  BOOK_NOT_IMPLEMENTED("gemm.01", "exercises/01_gemm_cpu/r01_naive.cc",
                       "chapters/01_gemm_cpu/README.md, section Rung 1: naive");
}

}  // namespace book::gemm
