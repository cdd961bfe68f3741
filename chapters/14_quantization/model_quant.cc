#include "chapters/14_quantization/model_quant.h"

#include <algorithm>
#include <cmath>
#include <memory>

#include "chapters/04_training_baseline/parameters.h"
#include "common/check.h"

namespace book::quant {

const char* name(ActivationQuant quant) {
  switch (quant) {
    case ActivationQuant::kNone:
      return "fp32";
    case ActivationQuant::kPerTensor:
      return "per-tensor";
    case ActivationQuant::kPerToken:
      return "per-token";
  }
  return "?";
}

PreparedLinear reference_kernel(const QuantizedMatrix& w) {
  check_matrix(w);
  if (w.scheme.bits == Bits::kInt8 && w.scheme.symmetry == Symmetry::kSymmetric)
    return [&w](const float* x, int rows, float* y) {
      for (int t = 0; t < rows; ++t)
        int8_gemv(w, {x + static_cast<std::size_t>(t) * w.cols, static_cast<std::size_t>(w.cols)},
                  {y + static_cast<std::size_t>(t) * w.rows, static_cast<std::size_t>(w.rows)});
    };
  return [&w](const float* x, int rows, float* y) {
    std::vector<float> row(static_cast<std::size_t>(w.cols));
    for (int r = 0; r < w.rows; ++r) {
      for (int c = 0; c < w.cols; ++c) row[c] = w.value(r, c);
      for (int t = 0; t < rows; ++t) {
        const float* xt = x + static_cast<std::size_t>(t) * w.cols;
        float sum = 0;
        for (int c = 0; c < w.cols; ++c) sum += row[c] * xt[c];
        y[static_cast<std::size_t>(t) * w.rows + r] = sum;
      }
    }
  };
}

std::size_t QuantizedLinear::weight_bytes() const {
  return weight.bytes() + 4 * (fp32_weight.size() + divisor.size());
}

namespace {

// Rounds x to the INT8 grid of scale s and back (clamped to ±127).
float fake_int8(float x, float s) {
  const long q = std::clamp(std::lround(x / s), -127L, 127L);
  return static_cast<float>(q) * s;
}

}  // namespace

void QuantizedLinear::forward(const float* x, int rows, float* y,
                              const PreparedLinear& product) const {
  const std::size_t n = static_cast<std::size_t>(rows) * in;
  std::vector<float> xin(x, x + n);
  if (!divisor.empty())
    for (std::size_t i = 0; i < n; ++i) xin[i] /= divisor[i % in];
  // The FP32 columns leave the INT8 product: gathered apart, zeroed in it.
  const std::size_t kept = fp32_inputs.size();
  std::vector<float> xo(static_cast<std::size_t>(rows) * kept);
  for (int t = 0; t < rows; ++t)
    for (std::size_t k = 0; k < kept; ++k) {
      float& v = xin[static_cast<std::size_t>(t) * in + fp32_inputs[k]];
      xo[t * kept + k] = v;
      v = 0;
    }
  if (activations == ActivationQuant::kPerTensor) {
    for (float& v : xin) v = fake_int8(v, activation_scale);
  } else if (activations == ActivationQuant::kPerToken) {
    for (int t = 0; t < rows; ++t) {
      float* row = xin.data() + static_cast<std::size_t>(t) * in;
      float m = 0;
      for (int j = 0; j < in; ++j) m = std::max(m, std::abs(row[j]));
      const float s = m > 0 ? m / 127.0f : 1.0f;
      for (int j = 0; j < in; ++j) row[j] = fake_int8(row[j], s);
    }
  }
  product(xin.data(), rows, y);
  for (int t = 0; t < rows; ++t) {
    float* yt = y + static_cast<std::size_t>(t) * out;
    for (int o = 0; o < out; ++o) yt[o] += bias[o];
    for (std::size_t k = 0; k < kept; ++k) {
      const float v = xo[t * kept + k];
      const float* wk = fp32_weight.data() + k * out;
      for (int o = 0; o < out; ++o) yt[o] += v * wk[o];
    }
  }
}

std::int64_t QuantizedModel::block_weights() const {
  std::int64_t total = 0;
  for (const auto& layer : layers)
    for (const QuantizedLinear& p : layer) total += static_cast<std::int64_t>(p.in) * p.out;
  return total;
}

std::size_t QuantizedModel::block_bytes() const {
  std::size_t total = 0;
  for (const auto& layer : layers)
    for (const QuantizedLinear& p : layer) total += p.weight_bytes();
  return total;
}

std::size_t QuantizedModel::model_bytes() const {
  return block_bytes() + 4 * static_cast<std::size_t>(config.parameter_count() - block_weights());
}

double QuantizedModel::block_bits_per_weight() const {
  return 8.0 * static_cast<double>(block_bytes()) / static_cast<double>(block_weights());
}

double QuantizedModel::model_bits_per_weight() const {
  return 8.0 * static_cast<double>(model_bytes()) / static_cast<double>(config.parameter_count());
}

train::BlockTensors<float> block_tensors(train::Model<float>& model, int layer) {
  return train::bind(model.layout(), model.params().data()).blocks.at(layer);
}

std::vector<float> out_by_in(const float* w, int in, int out) {
  std::vector<float> t(static_cast<std::size_t>(in) * out);
  for (int i = 0; i < in; ++i)
    for (int o = 0; o < out; ++o)
      t[static_cast<std::size_t>(o) * in + i] = w[static_cast<std::size_t>(i) * out + o];
  return t;
}

ProjectionView projection_of(const train::Config& config, const train::BlockTensors<float>& b,
                             train::Projection which) {
  const int c = config.d_model, f = config.d_ff();
  switch (which) {
    case train::Projection::kQkv:
      return {b.w_qkv, b.b_qkv, c, 3 * c};
    case train::Projection::kOut:
      return {b.w_out, b.b_out, c, c};
    case train::Projection::kFc:
      return {b.w_fc, b.b_fc, c, f};
    case train::Projection::kProj:
      return {b.w_proj, b.b_proj, f, c};
  }
  return {};
}

std::unique_ptr<train::Model<float>> clone(const train::Model<float>& model) {
  auto copy = std::make_unique<train::Model<float>>(model.config(), 1);
  std::copy(model.params().data(), model.params().data() + model.layout().total(),
            copy->params().data());
  return copy;
}

namespace {

template <typename T>
void check_layers(const std::vector<T>& per_layer, int layers, const char* what) {
  BOOK_CHECK(per_layer.empty() || static_cast<int>(per_layer.size()) == layers,
             "quantize_model: " << what << " has " << per_layer.size() << " layers, the model "
                                << layers << "; give one entry per layer or none");
}

}  // namespace

QuantizedModel quantize_model(const train::Model<float>& model, const Scheme& scheme,
                              const QuantizeOptions& o) {
  const train::Config& config = model.config();
  const int layers = config.n_layer;
  check_layers(o.absmax, layers, "absmax");
  check_layers(o.fp32_columns, layers, "fp32_columns");
  check_layers(o.divisors, layers, "divisors");
  BOOK_CHECK(o.activations != ActivationQuant::kPerTensor || !o.absmax.empty(),
             "quantize_model: per-tensor activations need calibrated absmax (calibrate())");
  BOOK_CHECK(o.fp32_threshold == 0 || !o.absmax.empty(),
             "quantize_model: fp32_threshold " << o.fp32_threshold
                                               << " needs calibrated absmax (calibrate())");
  auto& mutable_model = const_cast<train::Model<float>&>(model);  // read only
  QuantizedModel q{config, scheme, {}};
  for (int l = 0; l < layers; ++l) {
    const train::BlockTensors<float> b = block_tensors(mutable_model, l);
    std::array<QuantizedLinear, 4> layer;
    for (int p = 0; p < 4; ++p) {
      const ProjectionView v = projection_of(config, b, static_cast<train::Projection>(p));
      check_scheme(scheme, v.out, v.in);
      QuantizedLinear& ql = layer[p];
      ql.in = v.in;
      ql.out = v.out;
      ql.bias.assign(v.bias, v.bias + v.out);
      ql.activations = o.activations;
      std::vector<float> divisor(v.in, 1.0f);
      if (!o.divisors.empty() && !o.divisors[l][p].empty()) {
        BOOK_CHECK(static_cast<int>(o.divisors[l][p].size()) == v.in,
                   "quantize_model: layer " << l << " projection " << p << " has "
                                            << o.divisors[l][p].size() << " divisors for " << v.in
                                            << " inputs");
        for (int j = 0; j < v.in; ++j)
          BOOK_CHECK(o.divisors[l][p][j] > 0 && std::isfinite(o.divisors[l][p][j]),
                     "quantize_model: divisor " << j << " of layer " << l << " projection " << p
                                                << " is " << o.divisors[l][p][j]
                                                << "; divisors must be positive and finite");
        ql.divisor = o.divisors[l][p];
        divisor = ql.divisor;
      }
      std::vector<bool> keep(v.in, false);
      if (!o.fp32_columns.empty())
        for (const int j : o.fp32_columns[l][p]) {
          BOOK_CHECK(j >= 0 && j < v.in, "quantize_model: FP32 column "
                                             << j << " of layer " << l << " projection " << p
                                             << " is outside its " << v.in << " inputs");
          keep[j] = true;
        }
      const ColumnAbsmax* absmax = o.absmax.empty() ? nullptr : &o.absmax[l][p];
      BOOK_CHECK(!absmax || static_cast<int>(absmax->size()) == v.in,
                 "quantize_model: absmax of layer " << l << " projection " << p << " has "
                                                    << absmax->size() << " columns, not " << v.in);
      if (o.fp32_threshold > 0)
        for (int j = 0; j < v.in; ++j) keep[j] = keep[j] || (*absmax)[j] > o.fp32_threshold;
      // W [in, out] → [out][in], with W's input j multiplied by the divisor (x_j is divided).
      std::vector<float> wt(static_cast<std::size_t>(v.in) * v.out);
      float act_max = 0;
      for (int j = 0; j < v.in; ++j) {
        if (keep[j]) {
          ql.fp32_inputs.push_back(j);
          for (int o2 = 0; o2 < v.out; ++o2)
            ql.fp32_weight.push_back(v.w[static_cast<std::size_t>(j) * v.out + o2] * divisor[j]);
          continue;
        }
        for (int o2 = 0; o2 < v.out; ++o2)
          wt[static_cast<std::size_t>(o2) * v.in + j] =
              v.w[static_cast<std::size_t>(j) * v.out + o2] * divisor[j];
        if (absmax) act_max = std::max(act_max, (*absmax)[j] / divisor[j]);
      }
      ql.activation_scale = act_max > 0 ? act_max / 127.0f : 1.0f;
      ql.weight = quantize(wt, v.out, v.in, scheme);
    }
    q.layers.push_back(std::move(layer));
  }
  return q;
}

void check_serves(const QuantizedModel& q, const train::Config& c) {
  const train::Config& m = q.config;
  BOOK_CHECK(m.n_layer == c.n_layer && m.d_model == c.d_model && m.n_head == c.n_head &&
                 m.vocab_size == c.vocab_size && m.context == c.context &&
                 static_cast<int>(q.layers.size()) == c.n_layer,
             "serve: quantised weights of a model with "
                 << q.layers.size() << " layers, width " << m.d_model << " cannot serve a model "
                 << "with " << c.n_layer << " layers, width " << c.d_model
                 << "; quantise this model instead");
  const train::BlockTensors<float> none{};
  for (int l = 0; l < c.n_layer; ++l)
    for (int p = 0; p < 4; ++p) {
      const ProjectionView v = projection_of(c, none, static_cast<train::Projection>(p));
      const QuantizedLinear& ql = q.layers[l][p];
      const QuantizedMatrix& w = ql.weight;
      BOOK_CHECK(ql.in == v.in && ql.out == v.out && w.rows == v.out && w.cols == v.in,
                 "serve: layer " << l << " projection " << p << " is " << w.rows << " x " << w.cols
                                 << ", the model's is " << v.out << " x " << v.in);
      BOOK_CHECK(w.scheme.name() == q.scheme.name(),
                 "serve: layer " << l << " projection " << p << " was quantised as "
                                 << w.scheme.name() << ", the bundle says " << q.scheme.name());
      check_matrix(w);
      BOOK_CHECK(static_cast<int>(ql.bias.size()) == v.out &&
                     (ql.divisor.empty() || static_cast<int>(ql.divisor.size()) == v.in) &&
                     ql.fp32_weight.size() == ql.fp32_inputs.size() * v.out,
                 "serve: layer " << l << " projection " << p
                                 << " has a bias, divisor or FP32 columns of the wrong size");
    }
}

kv::ModelRunner::LayerLinear serve(const QuantizedModel& q, const train::Config& config,
                                   LinearKernel kernel) {
  check_serves(q, config);
  auto products = std::make_shared<std::vector<std::array<PreparedLinear, 4>>>(q.layers.size());
  for (std::size_t l = 0; l < q.layers.size(); ++l)
    for (int p = 0; p < 4; ++p) (*products)[l][p] = kernel(q.layers[l][p].weight);
  return [&q, products](int layer, train::Projection which, const float* x, int rows, float* y) {
    const int p = static_cast<int>(which);
    q.layers[layer][p].forward(x, rows, y, (*products)[layer][p]);
  };
}

}  // namespace book::quant
