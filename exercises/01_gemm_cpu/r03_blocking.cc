// gemm.03 — your turn: run the i-k-j loops over tiles of B that fit in L1/L2.
// C = A·B, row-major, C overwritten and never read, nothing written past column n (see gemm.h).
#include "chapters/01_gemm_cpu/gemm.h"
#include "common/check.h"

namespace book::gemm {

void matmul_blocked(int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c,
                    int ldc) {
  (void)m, (void)n, (void)k, (void)a, (void)lda, (void)b, (void)ldb, (void)c, (void)ldc;
  BOOK_NOT_IMPLEMENTED("gemm.03", "exercises/01_gemm_cpu/r03_blocking.cc",
                       "chapters/01_gemm_cpu/README.md, section Rung 3: cache blocking");
}

}  // namespace book::gemm
