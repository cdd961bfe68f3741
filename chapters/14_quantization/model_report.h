/// @file
/// The chapter's model-level results as data: chapter 4's trained addition model with every
/// scheme and fix, outliers off and on, measured by task accuracy, KL and top-1 agreement against
/// FP32 (accuracy.h), and SmoothQuant's α sweep for a picture. Library functions, so that the
/// chapter's `quantize` stage prints and plots them and the tests run a small case.
///
/// INT4 uses groups of 32: the model's width is 64, so groups of 128 (the usual choice) do not
/// divide the 64-input projections (qkv, out, fc); check_scheme refuses them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "chapters/04_training_baseline/model.h"
#include "chapters/14_quantization/accuracy.h"
#include "chapters/14_quantization/model_quant.h"
#include "common/table.h"

namespace book::quant {

/// What run_model_quant does.
struct ModelQuantOptions {
  int calibration = 64;                 ///< calibration sequences (training split)
  int held_out = 200;                   ///< held-out problems (validation split)
  std::uint64_t seed = 14;              ///< problems, outlier channels and the random control
  int outlier_channels = 2;             ///< per LayerNorm, when outliers are on
  double outlier_min = 20;              ///< smallest outlier factor k_j
  double outlier_max = 100;             ///< largest
  double fp32_threshold = 6.0;          ///< LLM.int8's: inputs with calibrated |x| above stay FP32
  double protect_fraction = 0.01;       ///< AWQ's control: input channels kept in FP32 (at least 1)
  int group_size = 32;                  ///< INT4 group (see the file comment)
  int alpha_steps = 10;                 ///< α = 0, 1/steps, …, 1
  bool sweep_without_outliers = false;  ///< also sweep α on the plain model (else α = 0.5 there)
};

/// One table row.
struct SchemeRow {
  std::string scheme;           ///< e.g. "W8A8 per-tensor + SmoothQuant α=0.6"
  bool outliers = false;        ///< on the model with injected outliers
  double block_bits = 32;       ///< bits per weight of the block projections, all included
  double model_bits = 32;       ///< bits per parameter of the whole model
  std::size_t block_bytes = 0;  ///< bytes of the block projections' weights
  std::size_t model_bytes = 0;  ///< bytes of the whole model
  Quality quality;              ///< accuracy, KL, top-1
};

/// One point of the α sweep.
struct AlphaPoint {
  double alpha = 0;                                           ///< SmoothQuant's exponent
  ActivationQuant activations = ActivationQuant::kPerTensor;  ///< activation scales
  bool outliers = true;                                       ///< on the outlier model
  /// Weight scales: per channel, or one per tensor (SmoothQuant's O3 setting, where pushing
  /// the outliers into the weights at large α costs the whole matrix its precision).
  Granularity weights = Granularity::kPerChannel;
  Quality quality;  ///< at this α
};

/// Everything run_model_quant measured.
struct ModelQuantReport {
  std::vector<SchemeRow> rows;    ///< FP32 first, then each scheme, outliers off then on
  std::vector<AlphaPoint> sweep;  ///< α ascending, per-tensor then per-token
  /// The rows as a table: scheme, outliers, bits/weight (blocks, model), bytes, accuracy, KL,
  /// top-1.
  Table table() const;
  /// The sweep as a table (for gnuplot): α, weights, activations, outliers, accuracy, KL, top-1.
  Table sweep_table() const;
  /// The α of the sweep with the smallest KL for these activations, outliers and weight scales
  /// (the first on ties). Throws book::Error if the sweep has no such points.
  double best_alpha(ActivationQuant activations, bool outliers,
                    Granularity weights = Granularity::kPerChannel) const;
};

/// Runs every scheme on `model` (whole, FP32, an addition model; not changed), the α sweep's
/// points on up to `threads` threads (0: every hardware thread; the numbers do not depend on
/// it). Throws
/// book::Error on bad options (counts < 1, a group size that does not divide the projections).
ModelQuantReport run_model_quant(const train::Model<float>& model,
                                 const ModelQuantOptions& options = {}, int threads = 0);

}  // namespace book::quant
