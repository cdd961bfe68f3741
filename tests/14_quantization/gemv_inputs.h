/// @file
/// Random quantised matrices built directly from random integers, scales and zero points (no
/// exercise involved, so the kernels' tests run on both tracks), and the reference they are
/// checked against: dequantise, then y = W·x in double, with a bound on FP32 rounding.
#pragma once

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <vector>

#include "chapters/14_quantization/quant.h"
#include "common/rng.h"

namespace book::quant::testing {

/// A consistent random `rows` × `cols` matrix of `scheme` (quant.h's random_quantized_matrix).
inline QuantizedMatrix random_quantized(const Scheme& scheme, int rows, int cols, Rng& rng) {
  return random_quantized_matrix(scheme, rows, cols, rng);
}

/// Random activations in [−1, 1].
inline std::vector<float> random_x(std::size_t n, Rng& rng) {
  std::vector<float> x(n);
  for (float& v : x) v = static_cast<float>(rng.uniform(-1, 1));
  return x;
}

/// y = W·x for x [m][cols] in double from the dequantised W (quant.h's dequantize), and for each
/// output the bound an FP32 kernel must meet: 2·(cols + 2)·FLT_EPSILON·Σ_c (|s·q_c| + |s·o|)·|x_c|
/// (a sum of cols products in FP32 in any order, the offset's Σx·s·o subtracted once: each term
/// rounds at most cols + 2 times; the stored value before the offset is at most |q| + |o|).
struct Reference {
  std::vector<double> y;      ///< [m][rows]
  std::vector<double> bound;  ///< [m][rows]
};

inline Reference reference_gemv(const QuantizedMatrix& w, const std::vector<float>& x, int m) {
  std::vector<float> dense(static_cast<std::size_t>(w.rows) * w.cols);
  dequantize(w, dense);
  Reference ref{std::vector<double>(static_cast<std::size_t>(m) * w.rows),
                std::vector<double>(static_cast<std::size_t>(m) * w.rows)};
  const int offset =
      w.scheme.bits == Bits::kInt4 && w.scheme.symmetry == Symmetry::kSymmetric ? 8 : 0;
  for (int t = 0; t < m; ++t)
    for (int r = 0; r < w.rows; ++r) {
      double sum = 0, magnitude = 0;
      for (int c = 0; c < w.cols; ++c) {
        const double xc = x[static_cast<std::size_t>(t) * w.cols + c];
        sum += dense[static_cast<std::size_t>(r) * w.cols + c] * xc;
        const double s = w.scale(r, c);
        const double o = w.zero(r, c) + offset;
        magnitude += (std::abs(s * (w.q(r, c) + offset)) + std::abs(s * o)) * std::abs(xc);
      }
      ref.y[static_cast<std::size_t>(t) * w.rows + r] = sum;
      ref.bound[static_cast<std::size_t>(t) * w.rows + r] =
          2.0 * (w.cols + 2) * FLT_EPSILON * magnitude;
    }
  return ref;
}

}  // namespace book::quant::testing
