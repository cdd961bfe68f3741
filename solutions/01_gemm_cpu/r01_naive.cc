// gemm.01 — what changed: nothing yet; one dot product per element of C, B read down a column.
#include "chapters/01_gemm_cpu/gemm.h"

namespace book::gemm {

void matmul_naive(int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c,
                  int ldc) {
  //! [naive]
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      float sum = 0.0f;
      // b[p * ldb + j] jumps a whole row per step: a new cache line (and soon a new page) each
      // time.
      for (int p = 0; p < k; ++p) sum += a[i * lda + p] * b[p * ldb + j];
      c[i * ldc + j] = sum;
    }
  //! [naive]
}

}  // namespace book::gemm
