// gemm.08 — your turn: a 12x32 AVX-512 kernel (__attribute__((target("avx512f")))) chosen when
// __builtin_cpu_supports("avx512f"). C = A·B, row-major, C overwritten and never read, nothing
// written past column n (see gemm.h).
#include "chapters/01_gemm_cpu/gemm.h"
#include "common/check.h"

namespace book::gemm {

void matmul_avx512(int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c,
                   int ldc) {
  (void)m, (void)n, (void)k, (void)a, (void)lda, (void)b, (void)ldb, (void)c, (void)ldc;
  BOOK_NOT_IMPLEMENTED("gemm.08", "exercises/01_gemm_cpu/r08_avx512.cc",
                       "chapters/01_gemm_cpu/README.md, section Rung 8: AVX-512");
}

}  // namespace book::gemm
