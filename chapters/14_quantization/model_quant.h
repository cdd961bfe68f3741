/// @file
/// Chapter 4's model served with quantised weights: each block's four projections (qkv, out, fc,
/// proj) become a QuantizedLinear, computed through kv::ModelRunner::use_linear, while the
/// embeddings, the LayerNorms, the biases and the tied head stay the model's FP32 tensors.
///
/// A QuantizedLinear also carries what the outlier fixes need: an optional per-input divisor (AWQ's
/// scales where no LayerNorm precedes the projection to fold them into), input columns computed in
/// FP32 (LLM.int8's decomposition; protected salient channels), and the activation quantisation at
/// its input (W8A8). Activations are *fake*-quantised: rounded to INT8 on their scale and turned
/// back into FP32 before the product, which gives the same numbers as an INT8×INT8 product with
/// its FP32 rescale up to float summation order — enough to measure accuracy, not a speed claim.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "chapters/04_training_baseline/block.h"
#include "chapters/04_training_baseline/model.h"
#include "chapters/10_paged_attention/model_runner.h"
#include "chapters/14_quantization/quant.h"

namespace book::quant {

/// How a projection's input is quantised before the product (W8A8), or not.
enum class ActivationQuant {
  kNone,       ///< FP32 activations (weight-only quantisation)
  kPerTensor,  ///< INT8, one static scale per projection: its calibrated input absmax / 127
  kPerToken,   ///< INT8, one dynamic scale per row (token): that row's absmax / 127
};

/// The name a table prints: "fp32", "per-tensor", "per-token".
const char* name(ActivationQuant quant);

/// y [rows][W.rows] = x [rows][W.cols] · Wᵀ (no bias) for the one matrix it was made for.
using PreparedLinear = std::function<void(const float* x, int rows, float* y)>;

/// Makes the product for a quantised matrix, once, when a model is served (a fast kernel
/// re-lays the weights then; `w` outlives the result). The one place the product is computed,
/// so a faster kernel is one argument away, e.g. chapter 14's QuantizedGemv:
/// `[](const QuantizedMatrix& w) { auto g = std::make_shared<QuantizedGemv>(w); return
/// PreparedLinear([g](const float* x, int m, float* y) { g->run(…, m, …); }); }`.
using LinearKernel = std::function<PreparedLinear(const QuantizedMatrix& w)>;

/// The simple correct kernel: symmetric INT8 through the exercise quant.int8_gemv, one row of x
/// at a time; every other scheme dequantises W one output row at a time and takes its dot
/// products with every row of x in FP32. Keeps a reference to `w`.
PreparedLinear reference_kernel(const QuantizedMatrix& w);

/// One block projection, quantised: y = (x / divisor) · W + b with some input columns in FP32.
struct QuantizedLinear {
  int in = 0;   ///< input features
  int out = 0;  ///< output features
  /// [out][in] (quant.h's layout: chapter 4's [in, out] transposed), with the fp32_inputs
  /// columns zeroed so that they take no room on the grid.
  QuantizedMatrix weight;
  std::vector<float> bias;  ///< [out], FP32
  /// Empty, or [in]: x_j is divided by divisor_j first (AWQ's scale, W's column multiplied).
  std::vector<float> divisor;
  std::vector<int> fp32_inputs;    ///< input columns kept in FP32, ascending
  std::vector<float> fp32_weight;  ///< [fp32_inputs.size()][out]: their rows of W [in, out]
  ActivationQuant activations = ActivationQuant::kNone;  ///< at the input, after the divisor
  /// kPerTensor: the static scale (calibrated absmax of the INT8 columns / 127).
  float activation_scale = 1;

  /// Bytes stored for the weights: the quantised matrix (QuantizedMatrix::bytes), 4 per FP32
  /// column weight and 4 per divisor; not the bias (counted with the model's FP32 tensors).
  std::size_t weight_bytes() const;
  /// y [rows][out] = this projection of x [rows][in], the product by `product` (a kernel made
  /// for `weight`).
  void forward(const float* x, int rows, float* y, const PreparedLinear& product) const;
};

/// Every block projection of a model, quantised. layers[l][p] is layer l's projection
/// train::Projection p (kQkv, kOut, kFc, kProj in that order).
struct QuantizedModel {
  train::Config config;  ///< the model's shape
  Scheme scheme;         ///< how every projection's weights were quantised
  std::vector<std::array<QuantizedLinear, 4>> layers;  ///< see above

  /// Elements of the four projections' weight matrices over all layers (Σ in · out).
  std::int64_t block_weights() const;
  /// Bytes of those, quantised (Σ QuantizedLinear::weight_bytes).
  std::size_t block_bytes() const;
  /// The whole model: block_bytes() + 4 bytes for every other parameter (embeddings, positions,
  /// LayerNorms, biases, all FP32 as they were).
  std::size_t model_bytes() const;
  /// 8 · block_bytes() / block_weights().
  double block_bits_per_weight() const;
  /// 8 · model_bytes() / config.parameter_count().
  double model_bits_per_weight() const;
};

/// One projection's input statistics from calibration (calibrate.h): per input column the
/// largest |x| over the calibration tokens.
using ColumnAbsmax = std::vector<float>;

/// What quantize_model does beyond the weights, per layer and projection (empty: nothing).
struct QuantizeOptions {
  ActivationQuant activations = ActivationQuant::kNone;  ///< W8A8 or weight-only
  /// Per layer and projection, the calibrated input absmax of each column; needed for
  /// kPerTensor and fp32_threshold, ignored otherwise.
  std::vector<std::array<ColumnAbsmax, 4>> absmax;
  /// LLM.int8's decomposition: input columns whose calibrated absmax exceeds this stay in FP32
  /// (0: none).
  double fp32_threshold = 0;
  /// Per layer and projection, input columns to keep in FP32 besides (protected channels).
  std::vector<std::array<std::vector<int>, 4>> fp32_columns;
  /// Per layer and projection, empty or per-input divisors (AWQ on out and proj).
  std::vector<std::array<std::vector<float>, 4>> divisors;
};

/// Quantises every block projection of `model` (whole, FP32) by `scheme`. Throws book::Error if
/// the scheme does not fit a projection's shape (e.g. a group size that does not divide its
/// inputs; check_scheme), a weight is NaN or infinite, or the options do not match the model
/// (sizes of absmax, fp32_columns or divisors; a column out of range; a divisor not positive;
/// per-tensor activations without absmax).
QuantizedModel quantize_model(const train::Model<float>& model, const Scheme& scheme,
                              const QuantizeOptions& options = {});

/// Throws book::Error unless `q` can serve a model of `config`: the same shape (layers, width,
/// vocabulary, context), four projections per layer of its in × out, each weight quantised by
/// q.scheme and consistent (check_matrix), biases, divisors and FP32 columns of the right sizes.
void check_serves(const QuantizedModel& q, const train::Config& config);

/// The runner's seam for `q` (check_serves against the runner's model first): `kernel` makes
/// every projection's product once, here; each is computed by QuantizedLinear::forward. `q`
/// must outlive the runner's use of it.
kv::ModelRunner::LayerLinear serve(const QuantizedModel& q, const train::Config& config,
                                   LinearKernel kernel = reference_kernel);

/// A model's block tensors as chapter 4 binds them (W [in, out]).
train::BlockTensors<float> block_tensors(train::Model<float>& model, int layer);
/// A projection's weight [in, out], bias [out] and shape in `block`.
struct ProjectionView {
  float* w = nullptr;     ///< [in, out]
  float* bias = nullptr;  ///< [out]
  int in = 0;             ///< inputs
  int out = 0;            ///< outputs
};
/// See ProjectionView.
ProjectionView projection_of(const train::Config& config, const train::BlockTensors<float>& block,
                             train::Projection which);

/// Chapter 4's W [in, out] as quant.h's [out][in] (a row per output channel).
std::vector<float> out_by_in(const float* w, int in, int out);

/// A new whole Model<float> with `model`'s configuration and parameters (Model has no copies).
std::unique_ptr<train::Model<float>> clone(const train::Model<float>& model);

}  // namespace book::quant
