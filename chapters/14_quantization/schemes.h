/// @file
/// What each quantisation scheme costs and loses on one matrix: bits per weight with its scales
/// counted, and the error of the round trip against the analytic bound (half a scale per value).
#pragma once

#include <span>
#include <string>
#include <vector>

#include "chapters/14_quantization/quant.h"

namespace book::quant {

/// One scheme's round trip on one matrix.
struct SchemeError {
  std::string scheme;          ///< Scheme::name()
  double bits_per_weight = 0;  ///< scales and zero points included
  std::size_t bytes = 0;       ///< QuantizedMatrix::bytes()
  double max_abs_error = 0;    ///< max |w − ŵ|
  /// max over values of |w − ŵ| / (s/2), where s is the value's scale: <= 1 is the analytic bound
  /// of round to nearest (a little above 1 only through float rounding)
  double worst_vs_bound = 0;
  double relative_rms = 0;  ///< ‖w − ŵ‖ / ‖w‖
  double sqnr_db = 0;       ///< 20·log10(‖w‖ / ‖w − ŵ‖): signal-to-quantisation-noise
};

/// Quantises the [rows][cols] matrix `w` by `scheme`, dequantises it and measures the error.
/// Throws book::Error as quantize() does.
SchemeError measure_scheme(std::span<const float> w, int rows, int cols, const Scheme& scheme);

/// The schemes the stage compares, coarsest scale first within each bit width: INT8 per tensor,
/// per channel, g128 (and asymmetric); INT4 per channel, g128, g64, g32 (and asymmetric g128).
/// Groups that do not divide `cols` are left out.
std::vector<Scheme> stage_schemes(int cols);

}  // namespace book::quant
