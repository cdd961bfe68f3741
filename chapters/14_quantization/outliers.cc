#include "chapters/14_quantization/outliers.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "chapters/04_training_baseline/layers.h"
#include "chapters/14_quantization/accuracy.h"
#include "common/check.h"
#include "common/rng.h"

namespace book::quant {

namespace {

const char* const kProjectionNames[4] = {"qkv", "out", "fc", "proj"};

// W's per-input absmax: row j of W [in, out].
std::vector<float> row_absmax(const ProjectionView& v) {
  std::vector<float> m(v.in, 0.0f);
  for (int j = 0; j < v.in; ++j)
    for (int o = 0; o < v.out; ++o)
      m[j] = std::max(m[j], std::abs(v.w[static_cast<std::size_t>(j) * v.out + o]));
  return m;
}

// LN channel j scaled by 1 / s_j, W's row j by s_j: the function is unchanged.
void fold(float* gain, float* bias, const ProjectionView& v, std::span<const float> s) {
  for (int j = 0; j < v.in; ++j) {
    gain[j] /= s[j];
    bias[j] /= s[j];
    for (int o = 0; o < v.out; ++o) v.w[static_cast<std::size_t>(j) * v.out + o] *= s[j];
  }
}

void check_calibration(const train::Config& config, const Calibration& c, const char* who) {
  BOOK_CHECK(static_cast<int>(c.absmax.size()) == config.n_layer,
             who << ": the calibration has " << c.absmax.size() << " layers, the model "
                 << config.n_layer << "; calibrate this model");
}

}  // namespace

Calibration calibrate(train::Model<float>& model, std::span<const std::vector<int>> sequences,
                      bool keep_inputs) {
  BOOK_CHECK(!sequences.empty(), "calibrate: no calibration sequences");
  const train::Config& config = model.config();
  Calibration c;
  c.absmax.resize(config.n_layer);
  c.mean_abs.resize(config.n_layer);
  c.inputs.resize(config.n_layer);
  std::vector<train::BlockTensors<float>> blocks;
  for (int l = 0; l < config.n_layer; ++l) {
    blocks.push_back(block_tensors(model, l));
    for (int p = 0; p < 4; ++p) {
      const int in = projection_of(config, blocks[l], static_cast<train::Projection>(p)).in;
      c.absmax[l][p].assign(in, 0.0f);
      c.mean_abs[l][p].assign(in, 0.0f);
    }
  }
  std::vector<double> sums;
  const kv::ModelRunner::LayerLinear record = [&](int layer, train::Projection which,
                                                  const float* x, int rows, float* y) {
    const int p = static_cast<int>(which);
    const ProjectionView v = projection_of(config, blocks[layer], which);
    const std::span<const float> xs{x, static_cast<std::size_t>(rows) * v.in};
    const std::string what = "calibration activations of layer " + std::to_string(layer) + " " +
                             kProjectionNames[p] + " input";
    check_finite(xs, what.c_str());
    for (int t = 0; t < rows; ++t)
      for (int j = 0; j < v.in; ++j) {
        const float a = std::abs(xs[static_cast<std::size_t>(t) * v.in + j]);
        c.absmax[layer][p][j] = std::max(c.absmax[layer][p][j], a);
        c.mean_abs[layer][p][j] += a;  // a sum until the end
      }
    if (keep_inputs) c.inputs[layer][p].insert(c.inputs[layer][p].end(), xs.begin(), xs.end());
    if (layer == 0 && which == train::Projection::kQkv) c.tokens += rows;
    train::linear_forward(x, rows, v.in, v.w, v.out, v.bias, v.out, y, v.out);
  };
  teacher_forced_logits(model, sequences, record);
  for (auto& layer : c.mean_abs)
    for (auto& m : layer)
      for (float& v : m) v /= static_cast<float>(c.tokens);
  return c;
}

std::vector<Outlier> inject_outliers(train::Model<float>& model, int channels, double min_factor,
                                     double max_factor, std::uint64_t seed) {
  const train::Config& config = model.config();
  BOOK_CHECK(channels >= 1 && channels <= config.d_model, "inject_outliers: channels "
                                                              << channels << " must be in [1, "
                                                              << config.d_model << "]");
  BOOK_CHECK(min_factor >= 1 && min_factor <= max_factor && std::isfinite(max_factor),
             "inject_outliers: factors [" << min_factor << ", " << max_factor
                                          << "] must satisfy 1 <= min <= max");
  Rng rng(seed);
  std::vector<Outlier> made;
  for (int l = 0; l < config.n_layer; ++l) {
    const train::BlockTensors<float> b = block_tensors(model, l);
    for (const bool ln2 : {false, true}) {
      std::vector<int> order(config.d_model);
      std::iota(order.begin(), order.end(), 0);
      for (int i = 0; i < channels; ++i)  // a partial Fisher–Yates shuffle
        std::swap(order[i],
                  order[i + static_cast<int>(rng.uniform_int(0, config.d_model - i - 1))]);
      const ProjectionView v =
          projection_of(config, b, ln2 ? train::Projection::kFc : train::Projection::kQkv);
      std::vector<float> s(config.d_model, 1.0f);
      for (int i = 0; i < channels; ++i) {
        const double k = rng.uniform(min_factor, max_factor);
        s[order[i]] = static_cast<float>(1.0 / k);
        made.push_back({l, ln2, order[i], k});
      }
      // fold divides the LN by s and multiplies W by s: with s = 1/k, LN · k and W / k.
      fold(ln2 ? b.ln2_gain : b.ln1_gain, ln2 ? b.ln2_bias : b.ln1_bias, v, s);
    }
  }
  return made;
}

void smooth(train::Model<float>& model, const Calibration& calibration, double alpha) {
  const train::Config& config = model.config();
  check_calibration(config, calibration, "smooth");
  BOOK_CHECK(alpha >= 0 && alpha <= 1, "smooth: alpha " << alpha << " must be in [0, 1]");
  for (int l = 0; l < config.n_layer; ++l) {
    const train::BlockTensors<float> b = block_tensors(model, l);
    for (const train::Projection p : {train::Projection::kQkv, train::Projection::kFc}) {
      const ProjectionView v = projection_of(config, b, p);
      const std::vector<float> s =
          smooth_scales(calibration.absmax[l][static_cast<int>(p)], row_absmax(v), alpha);
      const bool first = p == train::Projection::kQkv;
      fold(first ? b.ln1_gain : b.ln2_gain, first ? b.ln1_bias : b.ln2_bias, v, s);
    }
  }
}

std::vector<std::array<std::vector<float>, 4>> awq(train::Model<float>& model,
                                                   const Calibration& calibration,
                                                   const Scheme& scheme, int grid) {
  const train::Config& config = model.config();
  check_calibration(config, calibration, "awq");
  BOOK_CHECK(calibration.tokens >= 1 && !calibration.inputs[0][0].empty(),
             "awq: the calibration kept no inputs; calibrate with keep_inputs = true");
  std::vector<std::array<std::vector<float>, 4>> divisors(config.n_layer);
  for (int l = 0; l < config.n_layer; ++l) {
    const train::BlockTensors<float> b = block_tensors(model, l);
    for (int p = 0; p < 4; ++p) {
      const ProjectionView v = projection_of(config, b, static_cast<train::Projection>(p));
      std::vector<float> wt(static_cast<std::size_t>(v.in) * v.out);  // [out][in]
      for (int j = 0; j < v.in; ++j)
        for (int o = 0; o < v.out; ++o)
          wt[static_cast<std::size_t>(o) * v.in + j] = v.w[static_cast<std::size_t>(j) * v.out + o];
      const AwqSearch found =
          awq_search(wt, v.out, v.in, calibration.inputs[l][p], calibration.tokens, scheme, grid);
      if (p == 0)
        fold(b.ln1_gain, b.ln1_bias, v, found.scales);
      else if (p == 2)
        fold(b.ln2_gain, b.ln2_bias, v, found.scales);
      else
        divisors[l][p] = found.scales;
    }
  }
  return divisors;
}

namespace {

int protected_count(int in, double fraction) {
  BOOK_CHECK(fraction > 0 && fraction <= 1,
             "protected channels: fraction " << fraction << " must be in (0, 1]");
  return std::max(1, static_cast<int>(std::ceil(fraction * in - 1e-9)));
}

}  // namespace

std::vector<std::array<std::vector<int>, 4>> salient_channels(const Calibration& calibration,
                                                              double fraction) {
  std::vector<std::array<std::vector<int>, 4>> chosen(calibration.mean_abs.size());
  for (std::size_t l = 0; l < chosen.size(); ++l)
    for (int p = 0; p < 4; ++p) {
      const std::vector<float>& m = calibration.mean_abs[l][p];
      std::vector<int> order(m.size());
      std::iota(order.begin(), order.end(), 0);
      const int n = protected_count(static_cast<int>(m.size()), fraction);
      std::partial_sort(order.begin(), order.begin() + n, order.end(),
                        [&](int a, int b) { return m[a] > m[b] || (m[a] == m[b] && a < b); });
      chosen[l][p].assign(order.begin(), order.begin() + n);
      std::sort(chosen[l][p].begin(), chosen[l][p].end());
    }
  return chosen;
}

std::vector<std::array<std::vector<int>, 4>> random_channels(const Calibration& calibration,
                                                             double fraction, std::uint64_t seed) {
  Rng rng(seed);
  std::vector<std::array<std::vector<int>, 4>> chosen(calibration.mean_abs.size());
  for (std::size_t l = 0; l < chosen.size(); ++l)
    for (int p = 0; p < 4; ++p) {
      const int in = static_cast<int>(calibration.mean_abs[l][p].size());
      std::vector<int> order(in);
      std::iota(order.begin(), order.end(), 0);
      const int n = protected_count(in, fraction);
      for (int i = 0; i < n; ++i)
        std::swap(order[i], order[i + static_cast<int>(rng.uniform_int(0, in - i - 1))]);
      chosen[l][p].assign(order.begin(), order.begin() + n);
      std::sort(chosen[l][p].begin(), chosen[l][p].end());
    }
  return chosen;
}

}  // namespace book::quant
