// Internal to the reference solutions: the scalar fringe of gemm.05 and gemm.06, a partial tile
// computed from packed panels.
#pragma once

namespace book::gemm::solution {

/// C[0:rows, 0:cols] = (beta == 0 ? 0 : C) + A panel · B panel, the panels packed with mr rows and
/// nr columns per step (only the first rows/cols are used).
inline void fringe_tile(int rows, int cols, int kc, const float* a, int mr, const float* b, int nr,
                        float* c, long ldc, bool accumulate) {
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) {
      float sum = 0.0f;
      for (int p = 0; p < kc; ++p) sum += a[p * mr + i] * b[p * nr + j];
      c[i * ldc + j] = accumulate ? c[i * ldc + j] + sum : sum;
    }
}

}  // namespace book::gemm::solution
