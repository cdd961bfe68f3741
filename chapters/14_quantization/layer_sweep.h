/// @file
/// SmoothQuant's α on one linear layer whose activations carry outlier channels of their own (as
/// a large LLM's do), W8A8 with per-tensor activation scales and per-channel weight scales: the
/// error curve whose minimum the method's α picks.
///
/// Chapter 4's trained model cannot show this curve with outliers made by an exact
/// reparametrisation: dividing W's rows by the same k_j that multiplies the activations makes
/// SmoothQuant's scales k_j times larger at every α, so smoothing undoes the injection exactly
/// whatever α is (model_report.h's sweep is flat for that reason). Here the weights are left as
/// they are, so the outliers are the activations' alone and α has something to trade.
#pragma once

#include <cstdint>
#include <vector>

namespace book::quant {

/// The layer and its outliers.
struct LayerSweepOptions {
  int tokens = 256;              ///< calibration and test rows of X
  int in = 512;                  ///< input features
  int out = 512;                 ///< output features
  int outlier_channels = 6;      ///< input channels whose activations are scaled up
  double outlier_scale = 50;     ///< by this factor (LLM.int8 reports ~20x and more past 6.7B)
  int steps = 20;                ///< α = 0, 1/steps, …, 1
  std::uint64_t seed = 14;       ///< X, W and the outlier channels
};

/// One point of the sweep.
struct LayerSweepPoint {
  double alpha = 0;            ///< SmoothQuant's exponent
  double error = 0;            ///< ‖Y − Ŷ‖ / ‖Y‖ of the W8A8 output, smoothed with this α
  /// max |X/s| / RMS(X/s): how little of its INT8 grid (one scale per tensor) a typical
  /// activation uses after smoothing; large while the outliers stay in the activations
  double activation_range = 0;
  /// the mean over output channels of max / RMS of that row of diag(s)·W: the same for the
  /// weights' per-channel grids; large once α pushes the outliers into the weights
  double weight_range = 0;
};

/// The whole sweep, and the layer without smoothing.
struct LayerSweep {
  std::vector<LayerSweepPoint> points;  ///< α ascending
  double error_unsmoothed = 0;          ///< W8A8 with no smoothing at all
  double error_weight_only = 0;         ///< INT8 weights, FP32 activations: the floor
  double best_alpha() const;            ///< the α with the smallest error (the first on ties)
};

/// Builds X [tokens][in] (standard normal, the outlier channels scaled by outlier_scale) and
/// W (normal, std 0.02), then for each α: s = smooth_scales(max|X_j|, max|W_j|, α) (the exercise
/// quant.smooth_scales), X/s quantised to INT8 with one scale per tensor, diag(s)·W per output
/// channel, and the output error against FP32. Throws book::Error if a size is < 1, the outlier
/// channels exceed the inputs, the scale is not finite and > 0, or steps < 1.
LayerSweep layer_alpha_sweep(const LayerSweepOptions& options = {});

}  // namespace book::quant
