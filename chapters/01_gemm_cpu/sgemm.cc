#include "chapters/01_gemm_cpu/sgemm.h"

#include <atomic>

#include "chapters/01_gemm_cpu/args.h"
#include "common/check.h"

namespace book::gemm {
namespace {
std::atomic<int> g_threads{0};
}

void set_sgemm_threads(int threads) {
  BOOK_CHECK(threads >= 0, "set_sgemm_threads: threads must be >= 0 (0 = all), got " << threads);
  g_threads = threads;
}

int sgemm_threads() { return g_threads; }

void sgemm(Transpose trans_a, Transpose trans_b, int m, int n, int k, float alpha, const float* a,
           int lda, const float* b, int ldb, float beta, float* c, int ldc) {
  const bool ta = trans_a == Transpose::kYes, tb = trans_b == Transpose::kYes;
  check_gemm_args("sgemm", m, n, k, a, lda, ta ? m : k, b, ldb, tb ? k : n, c, ldc);
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      float sum = 0.0f;
      for (int p = 0; p < k; ++p)
        sum += (ta ? a[p * lda + i] : a[i * lda + p]) * (tb ? b[j * ldb + p] : b[p * ldb + j]);
      float& out = c[i * ldc + j];
      out = beta == 0.0f ? alpha * sum : alpha * sum + beta * out;
    }
  }
}

}  // namespace book::gemm
