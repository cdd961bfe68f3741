// gemm.04 — your turn: keep a 6x16 tile of C in 12 AVX2 registers over a block of k steps
// (_mm256_fmadd_ps; the reference uses blocks of 256). C = A·B, row-major, C overwritten and never
// read, nothing written past column n (see gemm.h).
#include "chapters/01_gemm_cpu/gemm.h"
#include "common/check.h"

namespace book::gemm {

void matmul_microkernel(int m, int n, int k, const float* a, int lda, const float* b, int ldb,
                        float* c, int ldc) {
  (void)m, (void)n, (void)k, (void)a, (void)lda, (void)b, (void)ldb, (void)c, (void)ldc;
  BOOK_NOT_IMPLEMENTED("gemm.04", "exercises/01_gemm_cpu/r04_microkernel.cc",
                       "chapters/01_gemm_cpu/README.md, section Rung 4: the micro-kernel");
}

}  // namespace book::gemm
