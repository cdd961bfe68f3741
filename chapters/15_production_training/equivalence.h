/// @file
/// The comparison rule of an A/B experiment: are two runs' loss curves the same run? An
/// optimisation that changes only *how* the step is computed (a bucket size, a fused kernel, a
/// sharded optimizer) must leave the loss where it was, step by step, from the same seed. Some
/// changes promise the same bits (a change in when gradients are sent that adds the same numbers
/// in the same order); others only promise the same values within rounding (a different order of
/// summation, a lower precision), for which the rule is an absolute tolerance, 10⁻³ by default.
/// The first step where the curves part is the step to debug from.
#pragma once

#include <cstdint>
#include <span>

namespace book::prod {

/// What "the same loss" means for one experiment.
struct EquivalenceRule {
  /// Largest allowed |baseline − candidate| at a step (ignored when bit_exact).
  double tolerance = 1e-3;
  /// The candidate promises the same bits: any difference at all is a divergence.
  bool bit_exact = false;
  /// First step compared (1-based): earlier steps are skipped (e.g. a warm-up both arms agree to
  /// leave out).
  std::int64_t from_step = 1;
};

/// The verdict of one comparison.
struct Equivalence {
  bool equal = false;                      ///< no compared step diverged
  std::int64_t first_divergent_step = -1;  ///< the first step that broke the rule (−1: none)
  /// max |baseline − candidate| over the compared steps (+∞ if a loss was not finite).
  double largest_difference = 0;
  std::int64_t steps_compared = 0;  ///< steps from_step … the last
};

/// Exercise prod.loss_equivalence: compares two loss curves under `rule`. Element i of each span
/// is the training loss of step i + 1. A step diverges when either loss is not finite (a NaN or
/// an infinite loss is a diverged run, whatever the other arm did), or, under bit_exact, when the
/// two floats' bits differ, or otherwise when |baseline − candidate| > tolerance (computed in
/// double). largest_difference covers every compared step, also those after the first divergence.
/// Throws book::Error, before comparing anything, for curves of different lengths, empty curves,
/// a tolerance that is negative or not finite, or a from_step outside [1, length].
/// \exercise{prod.loss_equivalence}
Equivalence compare_losses(std::span<const float> baseline, std::span<const float> candidate,
                           const EquivalenceRule& rule);

}  // namespace book::prod
