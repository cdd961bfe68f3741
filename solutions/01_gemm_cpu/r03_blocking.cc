// gemm.03 — what changed: the i-k-j loops run tile by tile. A kTileK×kTileN tile of B (64 KiB)
// stays in L2 while all rows of C pass over it, and a kTileN-wide strip of a C row (1 KiB) stays in
// L1 while kTileK rows of B update it, instead of every row of B streaming from memory m times.
#include <algorithm>

#include "chapters/01_gemm_cpu/gemm.h"

namespace book::gemm {
namespace {
constexpr int kTileN = 256;  // columns of B and C per tile
constexpr int kTileK = 64;   // depth per tile
}  // namespace

void matmul_blocked(int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c,
                    int ldc) {
  for (int i = 0; i < m; ++i) std::fill(c + i * ldc, c + i * ldc + n, 0.0f);
  for (int j0 = 0; j0 < n; j0 += kTileN) {
    const int j1 = std::min(n, j0 + kTileN);
    for (int p0 = 0; p0 < k; p0 += kTileK) {
      const int p1 = std::min(k, p0 + kTileK);
      for (int i = 0; i < m; ++i) {
        float* __restrict c_row = c + i * ldc;
        for (int p = p0; p < p1; ++p) {
          const float a_ip = a[i * lda + p];
          const float* __restrict b_row = b + p * ldb;
          for (int j = j0; j < j1; ++j) c_row[j] += a_ip * b_row[j];
        }
      }
    }
  }
}

}  // namespace book::gemm
