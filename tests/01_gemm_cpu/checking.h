// Shared by chapter 1's tests: random operands, a double-precision reference, and a comparison
// whose tolerance scales with k.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "common/rng.h"

namespace book::gemm::testing {

/// One test problem: sizes, and extra padding of each leading dimension beyond the stored row.
struct Shape {
  int m, n, k;
  int pad_a = 0, pad_b = 0, pad_c = 0;
  std::string describe() const {
    std::ostringstream out;
    out << "m=" << m << " n=" << n << " k=" << k << " (lda pad " << pad_a << ", ldb pad " << pad_b
        << ", ldc pad " << pad_c << ")";
    return out.str();
  }
};

/// Awkward shapes: 1×1×1, primes, tall-skinny, short-wide, k = 1, k ≫ m, n, padded leading
/// dimensions, exact multiples of the micro-tiles, and sizes that cross each cache block (KC, MC,
/// NC).
inline std::vector<Shape> awkward_shapes() {
  return {
      {1, 1, 1},
      {127, 131, 137},
      {1000, 3, 17},
      {3, 700, 9},
      {37, 45, 1},
      {5, 7, 3001},
      {33, 47, 29, 5, 3, 11},
      {48, 64, 256},
      {96, 128, 100, 1, 0, 7},
      {200, 300, 700},
      {13, 4200, 40},
      {300, 17, 300, 0, 9, 0},
      {2100, 90, 400},  // more rows than one MC block (2048), more depth than one KC block
  };
}

/// The sentinel left in C's padding (columns n..ldc-1): a rung must not write there.
constexpr float kPaddingSentinel = -12345.0f;

/// A row-major matrix filled with uniform values in [-1, 1) (never zeros, never all equal).
inline std::vector<float> random_matrix(Rng& rng, int rows, int ld) {
  std::vector<float> values(static_cast<std::size_t>(rows) * ld);
  fill_uniform<float>(values, rng);
  return values;
}

/// Compares `c` (m×n, ldc) with alpha·op(A)·op(B) + beta·c0 computed in double. `a_at(i, p)` and
/// `b_at(p, j)` read op(A) and op(B). Tolerance per element: (k + 4) · 2^-23 · (|alpha| Σ_p
/// |a_ip b_pj| + |beta c0_ij|), i.e. about twice the worst-case float rounding bound γ_k Σ|a b| of
/// a k-term dot product in any summation order (Higham, "Accuracy and Stability of Numerical
/// Algorithms", 2nd ed., §3.1, with u = 2^-24). Adds a gtest failure naming the first mismatch.
inline void expect_matches(const std::string& what, int m, int n, int k,
                           const std::function<double(int, int)>& a_at,
                           const std::function<double(int, int)>& b_at, double alpha, double beta,
                           const std::vector<float>& c0, const std::vector<float>& c, int ldc) {
  const double unit = std::ldexp(1.0, -23);
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      double sum = 0, magnitude = 0;
      for (int p = 0; p < k; ++p) {
        sum += a_at(i, p) * b_at(p, j);
        magnitude += std::abs(a_at(i, p) * b_at(p, j));
      }
      const std::size_t at = static_cast<std::size_t>(i) * ldc + j;
      double expected = alpha * sum, scale = std::abs(alpha) * magnitude;
      if (beta != 0) expected += beta * c0[at], scale += std::abs(beta * c0[at]);
      const double tolerance = (k + 4) * unit * scale + std::numeric_limits<float>::denorm_min();
      const double actual = c[at];
      if (!(std::abs(actual - expected) <= tolerance)) {  // also catches NaN
        ADD_FAILURE() << what << ": first mismatch at C(" << i << "," << j << "): expected "
                      << expected << " (double reference), got " << actual << ", tolerance "
                      << tolerance;
        return;
      }
    }
    for (int j = n; j < ldc; ++j) {
      const std::size_t at = static_cast<std::size_t>(i) * ldc + j;
      if (c[at] != c0[at]) {
        ADD_FAILURE() << what << ": wrote C(" << i << "," << j << ") beyond column n=" << n
                      << " (ldc=" << ldc << "): was " << c0[at] << ", now " << c[at];
        return;
      }
    }
  }
}

}  // namespace book::gemm::testing
