/// @file
/// Activation outliers and the three fixes, all on a whole FP32 Model<float>.
///
/// Making outliers is a reparametrisation: LayerNorm's output channel j is gain_j · n_j + bias_j,
/// so multiplying gain_j and bias_j by k and dividing row j of the next linear's W [in, out] by k
/// leaves the block's function unchanged (in exact arithmetic; in FP32 to rounding) while channel
/// j of the activation grows k times — the few large channels that trained LLMs show. SmoothQuant
/// (smooth) is the same move the other way, with the exercise's scales: LN gain and bias divided
/// by s_j, W's row j multiplied by it. AWQ (awq) searches a scale per input channel for INT4
/// weights and folds it the same way where a LayerNorm precedes (qkv, fc); where none does (out,
/// proj: after attention and after GELU) the scale stays a per-input divisor of the projection
/// (QuantizedLinear::divisor), d_in floats a projection.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "chapters/04_training_baseline/model.h"
#include "chapters/14_quantization/model_quant.h"

namespace book::quant {

/// What calibration saw at every projection's input, per layer and projection.
struct Calibration {
  int tokens = 0;                                           ///< calibration tokens (rows)
  std::vector<std::array<ColumnAbsmax, 4>> absmax;          ///< per input column, max |x|
  std::vector<std::array<std::vector<float>, 4>> mean_abs;  ///< per input column, mean |x|
  /// With keep_inputs: the inputs themselves, [tokens][in] per layer and projection.
  std::vector<std::array<std::vector<float>, 4>> inputs;
};

/// Runs `model` (FP32) over `sequences` (teacher_forced_logits) and records every projection's
/// input. Throws book::Error naming the layer and projection if an activation is NaN or infinite
/// (a scale computed from it would poison every channel), or if sequences is empty.
Calibration calibrate(train::Model<float>& model, std::span<const std::vector<int>> sequences,
                      bool keep_inputs = false);

/// One outlier channel made by inject_outliers.
struct Outlier {
  int layer = 0;      ///< the block
  bool ln2 = false;   ///< LN2 (before fc) or LN1 (before qkv)
  int channel = 0;    ///< j
  double factor = 1;  ///< k_j
};

/// Scales `channels` distinct channels of every LN1 and LN2 (gain and bias) by factors drawn
/// uniformly from [min_factor, max_factor] with Rng(seed), and divides the matching input rows of
/// W_qkv and W_fc; see the file comment. Returns what it did. Throws book::Error if channels is
/// not in [1, d_model] or the factors are not 1 <= min <= max.
std::vector<Outlier> inject_outliers(train::Model<float>& model, int channels, double min_factor,
                                     double max_factor, std::uint64_t seed);

/// SmoothQuant with exponent `alpha`: for qkv and fc of every layer, s = smooth_scales(input
/// absmax from `calibration`, W's per-input absmax, alpha), migrated into the LayerNorm before
/// (gain and bias / s) and W's rows (· s). out and proj are left alone (no LayerNorm to fold
/// into). Throws book::Error if alpha is outside [0, 1] or the calibration is of another shape.
void smooth(train::Model<float>& model, const Calibration& calibration, double alpha);

/// AWQ for `scheme` (e.g. INT4 g32): awq_search on every projection with the calibration's kept
/// inputs; folds the scales of qkv and fc into the LayerNorms (changing `model`) and returns the
/// divisors of out and proj, per layer and projection, for QuantizeOptions::divisors. Throws
/// book::Error if the calibration has no inputs or the scheme does not fit a projection.
std::vector<std::array<std::vector<float>, 4>> awq(train::Model<float>& model,
                                                   const Calibration& calibration,
                                                   const Scheme& scheme, int grid = 20);

/// Per layer and projection, the ceil(fraction · in) input channels with the largest mean |x|
/// (AWQ's salient channels), ascending.
std::vector<std::array<std::vector<int>, 4>> salient_channels(const Calibration& calibration,
                                                              double fraction);
/// The same number of channels, chosen at random with Rng(seed): the control.
std::vector<std::array<std::vector<int>, 4>> random_channels(const Calibration& calibration,
                                                             double fraction, std::uint64_t seed);

}  // namespace book::quant
