// gemm.04 — what changed: a 6×16 tile of C lives in 12 AVX2 registers for the whole k loop, so each
// step loads 16 floats of B and 6 of A for 192 flops (gemm.03 loaded and stored C for every 16).
// A and B are still read in place: each step of the k loop touches a new row of B (a new page at
// large n), which is what packing (gemm.05) fixes. Fringe rows/columns use scalar code.
#include <immintrin.h>

#include "chapters/01_gemm_cpu/gemm.h"

namespace book::gemm {
namespace {
constexpr int kMr = 6, kNr = 16;

void tile_6x16(int k, const float* a, int lda, const float* b, int ldb, float* c, int ldc) {
  __m256 acc[kMr][2];
#pragma GCC unroll 6
  for (int i = 0; i < kMr; ++i) acc[i][0] = acc[i][1] = _mm256_setzero_ps();
  for (int p = 0; p < k; ++p) {
    const __m256 b0 = _mm256_loadu_ps(b + p * ldb), b1 = _mm256_loadu_ps(b + p * ldb + 8);
#pragma GCC unroll 6
    for (int i = 0; i < kMr; ++i) {
      const __m256 ai = _mm256_broadcast_ss(a + i * lda + p);
      acc[i][0] = _mm256_fmadd_ps(ai, b0, acc[i][0]);
      acc[i][1] = _mm256_fmadd_ps(ai, b1, acc[i][1]);
    }
  }
#pragma GCC unroll 6
  for (int i = 0; i < kMr; ++i) {
    _mm256_storeu_ps(c + i * ldc, acc[i][0]);
    _mm256_storeu_ps(c + i * ldc + 8, acc[i][1]);
  }
}

void tile_scalar(int rows, int cols, int k, const float* a, int lda, const float* b, int ldb,
                 float* c, int ldc) {
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) {
      float sum = 0.0f;
      for (int p = 0; p < k; ++p) sum += a[i * lda + p] * b[p * ldb + j];
      c[i * ldc + j] = sum;
    }
}
}  // namespace

void matmul_microkernel(int m, int n, int k, const float* a, int lda, const float* b, int ldb,
                        float* c, int ldc) {
  const int m_full = m / kMr * kMr, n_full = n / kNr * kNr;
  for (int j = 0; j < n_full; j += kNr)
    for (int i = 0; i < m_full; i += kMr)
      tile_6x16(k, a + i * lda, lda, b + j, ldb, c + i * ldc + j, ldc);
  // The fringe: the last columns of every row, then the last rows.
  tile_scalar(m_full, n - n_full, k, a, lda, b + n_full, ldb, c + n_full, ldc);
  tile_scalar(m - m_full, n, k, a + m_full * lda, lda, b, ldb, c + m_full * ldc, ldc);
}

}  // namespace book::gemm
