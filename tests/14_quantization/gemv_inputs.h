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

/// A consistent random `rows` × `cols` matrix of `scheme`: every stored integer drawn from its
/// whole range, scales in [0.005, 0.05], zero points anywhere in [0, 2^b − 1].
inline QuantizedMatrix random_quantized(const Scheme& scheme, int rows, int cols, Rng& rng) {
  check_scheme(scheme, rows, cols);
  QuantizedMatrix w;
  w.scheme = scheme;
  w.rows = rows;
  w.cols = cols;
  const std::size_t n = static_cast<std::size_t>(rows) * cols;
  const bool int4 = scheme.bits == Bits::kInt4;
  const bool symmetric = scheme.symmetry == Symmetry::kSymmetric;
  w.data.resize(int4 ? n / 2 : n);
  for (std::uint8_t& byte : w.data) {
    if (int4)  // nibbles 0..15; symmetric stores q + 8 with q in [−7, 7], so 1..15
      byte = static_cast<std::uint8_t>(rng.uniform_int(symmetric ? 1 : 0, 15) |
                                       rng.uniform_int(symmetric ? 1 : 0, 15) << 4);
    else
      byte = static_cast<std::uint8_t>(symmetric ? rng.uniform_int(-127, 127)
                                                 : rng.uniform_int(0, 255));
  }
  const std::size_t scales = scheme.granularity == Granularity::kPerTensor
                                 ? 1
                                 : static_cast<std::size_t>(rows) * w.groups_per_row();
  for (std::size_t i = 0; i < scales; ++i) {
    w.scales.push_back(static_cast<float>(rng.uniform(0.005, 0.05)));
    if (!symmetric) w.zeros.push_back(static_cast<std::uint8_t>(rng.uniform_int(0, qmax(scheme))));
  }
  check_matrix(w);
  return w;
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
