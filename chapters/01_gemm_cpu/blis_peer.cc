#include "chapters/01_gemm_cpu/blis_peer.h"

#include <blis.h>

namespace book::gemm {

void blis_matmul(int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c,
                 int ldc) {
  float one = 1.0f, zero = 0.0f;
  // BLIS takes a row stride and a column stride per operand: row-major is (ld, 1).
  bli_sgemm(BLIS_NO_TRANSPOSE, BLIS_NO_TRANSPOSE, m, n, k, &one, const_cast<float*>(a), lda, 1,
            const_cast<float*>(b), ldb, 1, &zero, c, ldc, 1);
}

void blis_set_threads(int threads) { bli_thread_set_num_threads(threads); }

}  // namespace book::gemm
