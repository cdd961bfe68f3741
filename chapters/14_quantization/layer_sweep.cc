#include "chapters/14_quantization/layer_sweep.h"

#include <algorithm>
#include <cmath>

#include "chapters/14_quantization/quant.h"
#include "common/check.h"
#include "common/rng.h"

namespace book::quant {

double LayerSweep::best_alpha() const {
  BOOK_CHECK(!points.empty(), "LayerSweep::best_alpha: the sweep has no points");
  return std::min_element(points.begin(), points.end(), [](const auto& a, const auto& b) {
           return a.error < b.error;
         })->alpha;
}

namespace {

// Y = X·Wᵀ in double, X [t][in], W [out][in] (quant.h's orientation).
std::vector<double> product(const std::vector<float>& x, const std::vector<float>& w, int tokens,
                            int in, int out) {
  std::vector<double> y(static_cast<std::size_t>(tokens) * out);
  for (int t = 0; t < tokens; ++t)
    for (int o = 0; o < out; ++o) {
      double sum = 0;
      for (int i = 0; i < in; ++i)
        sum += static_cast<double>(x[static_cast<std::size_t>(t) * in + i]) *
               w[static_cast<std::size_t>(o) * in + i];
      y[static_cast<std::size_t>(t) * out + o] = sum;
    }
  return y;
}

// ‖Y − Ŷ‖ / ‖Y‖.
double relative_error(const std::vector<double>& y, const std::vector<double>& y_hat) {
  double signal = 0, noise = 0;
  for (std::size_t i = 0; i < y.size(); ++i) {
    signal += y[i] * y[i];
    noise += (y[i] - y_hat[i]) * (y[i] - y_hat[i]);
  }
  return std::sqrt(noise / signal);
}

// max |v| / RMS(v): how much of an INT8 grid sized by the maximum the typical value uses.
double max_over_rms(const float* v, std::size_t n) {
  double max = 0, squares = 0;
  for (std::size_t i = 0; i < n; ++i) {
    max = std::max(max, std::abs(static_cast<double>(v[i])));
    squares += static_cast<double>(v[i]) * v[i];
  }
  return squares > 0 ? max / std::sqrt(squares / n) : 0;
}

// Round-trips x through symmetric INT8 with one scale for the whole tensor.
std::vector<float> per_tensor_int8(const std::vector<float>& x) {
  float absmax = 0;
  for (const float v : x) absmax = std::max(absmax, std::abs(v));
  const float s = absmax > 0 ? absmax / 127.0f : 1.0f;
  std::vector<float> out(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) out[i] = s * static_cast<float>(std::lround(x[i] / s));
  return out;
}

std::vector<float> per_channel_int8(const std::vector<float>& w, int out, int in) {
  std::vector<float> back(w.size());
  dequantize(quantize(w, out, in, {Bits::kInt8, Symmetry::kSymmetric, Granularity::kPerChannel}),
             back);
  return back;
}

}  // namespace

LayerSweep layer_alpha_sweep(const LayerSweepOptions& o) {
  BOOK_CHECK(o.tokens >= 1 && o.in >= 1 && o.out >= 1 && o.steps >= 1,
             "layer_alpha_sweep: tokens " << o.tokens << ", in " << o.in << ", out " << o.out
                                          << ", steps " << o.steps << "; each must be >= 1");
  BOOK_CHECK(o.outlier_channels >= 0 && o.outlier_channels <= o.in,
             "layer_alpha_sweep: " << o.outlier_channels << " outlier channels of " << o.in
                                   << " inputs; choose 0.." << o.in);
  BOOK_CHECK(std::isfinite(o.outlier_scale) && o.outlier_scale > 0,
             "layer_alpha_sweep: outlier scale " << o.outlier_scale << "; it must be finite and > 0");
  Rng rng(o.seed);
  std::vector<float> x(static_cast<std::size_t>(o.tokens) * o.in),
      w(static_cast<std::size_t>(o.out) * o.in);
  for (float& v : x) v = static_cast<float>(rng.normal());
  for (float& v : w) v = static_cast<float>(0.02 * rng.normal());
  for (int k = 0; k < o.outlier_channels; ++k) {
    const int j = static_cast<int>((static_cast<long>(k) * o.in) / std::max(o.outlier_channels, 1) +
                                   rng.uniform() * (o.in / std::max(o.outlier_channels, 1)));
    for (int t = 0; t < o.tokens; ++t)
      x[static_cast<std::size_t>(t) * o.in + std::min(j, o.in - 1)] *=
          static_cast<float>(o.outlier_scale);
  }
  std::vector<float> x_max(o.in, 0.0f), w_max(o.in, 0.0f);
  for (int t = 0; t < o.tokens; ++t)
    for (int i = 0; i < o.in; ++i)
      x_max[i] = std::max(x_max[i], std::abs(x[static_cast<std::size_t>(t) * o.in + i]));
  for (int r = 0; r < o.out; ++r)
    for (int i = 0; i < o.in; ++i)
      w_max[i] = std::max(w_max[i], std::abs(w[static_cast<std::size_t>(r) * o.in + i]));

  LayerSweep sweep;
  const std::vector<double> y = product(x, w, o.tokens, o.in, o.out);
  const std::vector<float> w_int8 = per_channel_int8(w, o.out, o.in);
  sweep.error_unsmoothed = relative_error(y, product(per_tensor_int8(x), w_int8, o.tokens, o.in, o.out));
  sweep.error_weight_only = relative_error(y, product(x, w_int8, o.tokens, o.in, o.out));
  for (int step = 0; step <= o.steps; ++step) {
    const double alpha = static_cast<double>(step) / o.steps;
    const std::vector<float> s = smooth_scales(x_max, w_max, alpha);
    std::vector<float> xs(x.size()), ws(w.size());
    for (std::size_t i = 0; i < x.size(); ++i) xs[i] = x[i] / s[i % o.in];
    for (std::size_t k = 0; k < w.size(); ++k) ws[k] = w[k] * s[k % o.in];
    LayerSweepPoint point{alpha};
    point.activation_range = max_over_rms(xs.data(), xs.size());
    for (int r = 0; r < o.out; ++r)
      point.weight_range += max_over_rms(ws.data() + static_cast<std::size_t>(r) * o.in, o.in) / o.out;
    // X/s · (diag(s)·W) is X·W in exact arithmetic: the error is the quantised copies' alone.
    point.error = relative_error(
        y, product(per_tensor_int8(xs), per_channel_int8(ws, o.out, o.in), o.tokens, o.in, o.out));
    sweep.points.push_back(point);
  }
  return sweep;
}

}  // namespace book::quant
