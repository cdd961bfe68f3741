// gemm.05 — your turn: copy A into 6-row panels and B into 16-column panels, step-major, then run
// the kernel on them. C = A·B, row-major, C overwritten and never read, nothing written past column
// n (see gemm.h).
#include "chapters/01_gemm_cpu/gemm.h"
#include "common/check.h"

namespace book::gemm {

void matmul_packed(int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c,
                   int ldc) {
  (void)m, (void)n, (void)k, (void)a, (void)lda, (void)b, (void)ldb, (void)c, (void)ldc;
  BOOK_NOT_IMPLEMENTED("gemm.05", "exercises/01_gemm_cpu/r05_packed.cc",
                       "chapters/01_gemm_cpu/README.md, section Rung 5: packing");
}

}  // namespace book::gemm
