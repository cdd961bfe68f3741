// gemm.04 — what changed: a 6×16 tile of C lives in 12 AVX2 registers through a block of 256 steps
// of k, so each step loads 16 floats of B and broadcasts 6 of A for 192 flops (gemm.03 loaded and
// stored C for every 16 flops). The 256×16 strip of B (16 KiB) stays in L1 while the tile sweeps
// down the rows. A and B are still read in place: each step of k touches a new row of B, 4 KiB
// away at n = 1024 (a new page, a TLB lookup), which is what packing (gemm.05) fixes.
// Fringe rows and columns use scalar code.
#include <immintrin.h>

#include <algorithm>

#include "chapters/01_gemm_cpu/gemm.h"

namespace book::gemm {
namespace {
constexpr int kMr = 6, kNr = 16, kKc = 256;

void tile_6x16(int kc, const float* a, int lda, const float* b, int ldb, float* c, int ldc,
               bool accumulate) {
  __m256 acc[kMr][2];
#pragma GCC unroll 6
  for (int i = 0; i < kMr; ++i) {
    acc[i][0] = accumulate ? _mm256_loadu_ps(c + i * ldc) : _mm256_setzero_ps();
    acc[i][1] = accumulate ? _mm256_loadu_ps(c + i * ldc + 8) : _mm256_setzero_ps();
  }
  for (int p = 0; p < kc; ++p) {
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

void tile_scalar(int rows, int cols, int kc, const float* a, int lda, const float* b, int ldb,
                 float* c, int ldc, bool accumulate) {
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) {
      float sum = accumulate ? c[i * ldc + j] : 0.0f;
      for (int p = 0; p < kc; ++p) sum += a[i * lda + p] * b[p * ldb + j];
      c[i * ldc + j] = sum;
    }
}
}  // namespace

void matmul_microkernel(int m, int n, int k, const float* a, int lda, const float* b, int ldb,
                        float* c, int ldc) {
  const int m_full = m / kMr * kMr, n_full = n / kNr * kNr;
  for (int p0 = 0; p0 < k; p0 += kKc) {
    const int kc = std::min(kKc, k - p0);
    const bool accumulate = p0 > 0;
    const float* a_block = a + p0;
    const float* b_block = b + static_cast<long>(p0) * ldb;
    for (int j = 0; j < n_full; j += kNr)
      for (int i = 0; i < m_full; i += kMr)
        tile_6x16(kc, a_block + static_cast<long>(i) * lda, lda, b_block + j, ldb,
                  c + static_cast<long>(i) * ldc + j, ldc, accumulate);
    // The fringe: the last columns of the full rows, then the last rows.
    tile_scalar(m_full, n - n_full, kc, a_block, lda, b_block + n_full, ldb, c + n_full, ldc,
                accumulate);
    tile_scalar(m - m_full, n, kc, a_block + static_cast<long>(m_full) * lda, lda, b_block, ldb,
                c + static_cast<long>(m_full) * ldc, ldc, accumulate);
  }
}

}  // namespace book::gemm
