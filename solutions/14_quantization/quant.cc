// Reference bodies of quant.per_channel_int8, quant.int4_pack, quant.int8_gemv,
// quant.smooth_scales and quant.awq_search (chapters/14_quantization/quant.h).
#include "chapters/14_quantization/quant.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "common/check.h"

namespace book::quant {

//! [per_channel_int8]
QuantizedMatrix quantize_per_channel_int8(std::span<const float> w, int rows, int cols) {
  const Scheme scheme{Bits::kInt8, Symmetry::kSymmetric, Granularity::kPerChannel};
  check_scheme(scheme, rows, cols);
  BOOK_CHECK(w.size() == static_cast<std::size_t>(rows) * cols,
             "quantize_per_channel_int8: a " << rows << " × " << cols << " matrix needs "
                                             << static_cast<std::size_t>(rows) * cols
                                             << " values, got " << w.size());
  check_finite(w, "weights");
  QuantizedMatrix out{scheme, rows, cols, std::vector<std::uint8_t>(w.size()),
                      std::vector<float>(rows), {}};
  for (int r = 0; r < rows; ++r) {
    const std::span<const float> row = w.subspan(static_cast<std::size_t>(r) * cols, cols);
    float absmax = 0;
    for (const float x : row) absmax = std::max(absmax, std::abs(x));
    const float s = absmax > 0 ? absmax / 127.0f : 1.0f;
    out.scales[r] = s;
    for (int c = 0; c < cols; ++c)
      out.data[static_cast<std::size_t>(r) * cols + c] =
          static_cast<std::uint8_t>(static_cast<std::int8_t>(std::lround(row[c] / s)));
  }
  return out;
}
//! [per_channel_int8]

//! [int4_pack]
std::vector<std::uint8_t> pack_int4(std::span<const std::uint8_t> nibbles) {
  BOOK_CHECK(nibbles.size() % 2 == 0, "pack_int4: " << nibbles.size()
                                                    << " values; INT4 packs two a byte, so the "
                                                       "count must be even");
  std::vector<std::uint8_t> packed(nibbles.size() / 2);
  for (std::size_t i = 0; i < packed.size(); ++i) {
    const std::uint8_t low = nibbles[2 * i], high = nibbles[2 * i + 1];
    BOOK_CHECK(low <= 15 && high <= 15, "pack_int4: value "
                                            << (low > 15 ? 2 * i : 2 * i + 1) << " is "
                                            << int{low > 15 ? low : high}
                                            << "; a 4-bit value is 0..15");
    packed[i] = static_cast<std::uint8_t>(low | (high << 4));
  }
  return packed;
}

std::vector<std::uint8_t> unpack_int4(std::span<const std::uint8_t> packed) {
  std::vector<std::uint8_t> nibbles(2 * packed.size());
  for (std::size_t i = 0; i < packed.size(); ++i) {
    nibbles[2 * i] = packed[i] & 0x0f;
    nibbles[2 * i + 1] = packed[i] >> 4;
  }
  return nibbles;
}
//! [int4_pack]

//! [int8_gemv]
void int8_gemv(const QuantizedMatrix& w, std::span<const float> x, std::span<float> y) {
  check_matrix(w);
  BOOK_CHECK(w.scheme.bits == Bits::kInt8 && w.scheme.symmetry == Symmetry::kSymmetric,
             "int8_gemv: takes symmetric INT8 weights, got " << w.scheme.name());
  BOOK_CHECK(x.size() == static_cast<std::size_t>(w.cols) &&
                 y.size() == static_cast<std::size_t>(w.rows),
             "int8_gemv: a " << w.rows << " × " << w.cols << " matrix needs x of " << w.cols
                             << " and y of " << w.rows << " values, got " << x.size() << " and "
                             << y.size());
  const int gc = w.group_cols();
  for (int r = 0; r < w.rows; ++r) {
    const auto* row = reinterpret_cast<const std::int8_t*>(w.data.data()) +
                      static_cast<std::size_t>(r) * w.cols;
    float sum = 0;
    for (int c0 = 0; c0 < w.cols; c0 += gc) {
      float group = 0;  // Σ q·x of one group, then its scale once
      for (int c = c0; c < c0 + gc; ++c) group += static_cast<float>(row[c]) * x[c];
      sum += w.scale(r, c0) * group;
    }
    y[r] = sum;
  }
}
//! [int8_gemv]

//! [smooth_scales]
std::vector<float> smooth_scales(std::span<const float> activation_absmax,
                                 std::span<const float> weight_absmax, double alpha) {
  BOOK_CHECK(!activation_absmax.empty() && activation_absmax.size() == weight_absmax.size(),
             "smooth_scales: " << activation_absmax.size() << " activation maxima and "
                               << weight_absmax.size()
                               << " weight maxima; one of each per input channel, at least one");
  BOOK_CHECK(std::isfinite(alpha) && alpha >= 0 && alpha <= 1,
             "smooth_scales: alpha is " << alpha << "; it must be in [0, 1] (0.5 is the usual)");
  std::vector<float> scales(activation_absmax.size());
  for (std::size_t j = 0; j < scales.size(); ++j) {
    const float a = activation_absmax[j], w = weight_absmax[j];
    BOOK_CHECK(std::isfinite(a) && a >= 0 && std::isfinite(w) && w >= 0,
               "smooth_scales: channel " << j << " has activation max " << a << " and weight max "
                                         << w << "; maxima of magnitudes are finite and >= 0");
    scales[j] = (a > 0 && w > 0) ? static_cast<float>(std::pow(a, alpha) / std::pow(w, 1 - alpha))
                                 : 1.0f;
  }
  return scales;
}
//! [smooth_scales]

//! [awq_search]
AwqSearch awq_search(std::span<const float> w, int rows, int cols, std::span<const float> x,
                     int tokens, const Scheme& scheme, int grid) {
  check_scheme(scheme, rows, cols);
  BOOK_CHECK(tokens >= 1 && grid >= 1,
             "awq_search: " << tokens << " tokens and a grid of " << grid << "; both must be >= 1");
  BOOK_CHECK(w.size() == static_cast<std::size_t>(rows) * cols &&
                 x.size() == static_cast<std::size_t>(tokens) * cols,
             "awq_search: W must hold " << rows << " × " << cols << " and x " << tokens << " × "
                                        << cols << " values, got " << w.size() << " and "
                                        << x.size());
  check_finite(w, "weights");
  check_finite(x, "activations");
  std::vector<double> magnitude(cols, 0.0);
  for (int t = 0; t < tokens; ++t)
    for (int j = 0; j < cols; ++j) magnitude[j] += std::abs(x[static_cast<std::size_t>(t) * cols + j]);
  for (double& m : magnitude) m /= tokens;
  // The FP32 outputs, once.
  std::vector<double> y(static_cast<std::size_t>(tokens) * rows);
  for (int t = 0; t < tokens; ++t)
    for (int r = 0; r < rows; ++r) {
      double sum = 0;
      for (int j = 0; j < cols; ++j)
        sum += static_cast<double>(x[static_cast<std::size_t>(t) * cols + j]) *
               w[static_cast<std::size_t>(r) * cols + j];
      y[static_cast<std::size_t>(t) * rows + r] = sum;
    }
  AwqSearch best;
  best.error = std::numeric_limits<double>::infinity();
  std::vector<float> scaled(w.size()), restored(w.size());
  for (int i = 0; i <= grid; ++i) {
    const double alpha = static_cast<double>(i) / grid;
    std::vector<float> s(cols);
    double smax = 0, smin = std::numeric_limits<double>::infinity();
    for (int j = 0; j < cols; ++j) {
      s[j] = magnitude[j] > 0 ? static_cast<float>(std::pow(magnitude[j], alpha)) : 1.0f;
      smax = std::max(smax, static_cast<double>(s[j]));
      smin = std::min(smin, static_cast<double>(s[j]));
    }
    const double norm = std::sqrt(smax * smin);
    for (float& v : s) v = static_cast<float>(v / norm);
    for (int r = 0; r < rows; ++r)
      for (int j = 0; j < cols; ++j)
        scaled[static_cast<std::size_t>(r) * cols + j] = w[static_cast<std::size_t>(r) * cols + j] * s[j];
    dequantize(quantize(scaled, rows, cols, scheme), restored);
    double error = 0;
    for (int t = 0; t < tokens; ++t)
      for (int r = 0; r < rows; ++r) {
        double sum = 0;
        for (int j = 0; j < cols; ++j)
          sum += static_cast<double>(x[static_cast<std::size_t>(t) * cols + j]) *
                 (restored[static_cast<std::size_t>(r) * cols + j] / s[j]);
        const double d = y[static_cast<std::size_t>(t) * rows + r] - sum;
        error += d * d;
      }
    error /= static_cast<double>(tokens) * rows;
    if (i == 0) best.error_plain = error;
    if (error < best.error) best = {alpha, s, error, best.error_plain};
  }
  return best;
}
//! [awq_search]

}  // namespace book::quant
