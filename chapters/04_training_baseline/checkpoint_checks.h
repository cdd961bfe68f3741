/// @file
/// The checks a training checkpoint's contents must pass before a trainer takes them: counts a
/// run can reach, finite weights and moments, a data stream that is not all zeros, a loss scaler
/// in range. Trainer::load uses them, and so can any other trainer's loader (one file or a folder
/// of shards), so every trainer refuses the same damaged files with the same words. Each takes
/// `what`, the file or folder as the message names it ("checkpoint path"), and throws book::Error
/// naming the value and what to do.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "chapters/04_training_baseline/precision.h"

namespace book::train {

/// 2^53 steps is 285 years at a step per microsecond: a larger count is a damaged file, and one
/// near 2^63 would overflow when the run goes on.
inline constexpr std::int64_t kMostCheckpointSteps = std::int64_t{1} << 53;

/// Requires 0 ≤ adam_step ≤ step ≤ 2^53 (skipped FP16 steps do not update Adam).
void check_checkpoint_steps(const std::string& what, std::int64_t step, std::int64_t adam_step);

/// Requires every value of section `name` to be finite, and ≥ 0 where `non_negative` (Adam's
/// second moments): a NaN weight would make every later loss NaN.
void check_finite_section(const std::string& what, const std::string& name,
                          std::span<const float> values, bool non_negative);

/// Requires a xoshiro state that is not all zeros (xoshiro never leaves it: it would draw zeros
/// forever).
void check_data_rng_state(const std::string& what, std::span<const std::uint64_t, 4> state);

/// A copy of `scaler` restored to `scale` and `clean_steps`; LossScaler::restore's refusal,
/// prefixed with `what`. The caller commits the copy once everything else has passed.
LossScaler restored_scaler(const std::string& what, const LossScaler& scaler, float scale,
                           std::int32_t clean_steps);

}  // namespace book::train
