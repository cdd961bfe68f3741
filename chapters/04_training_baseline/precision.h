/// @file
/// Mixed precision on a CPU: BF16 and FP16 storage emulated bit for bit, and dynamic loss scaling.
///
/// A GPU stores weights and gradients in 16 bits and keeps FP32 "master" weights for the
/// optimizer. Here the 16-bit formats are uint16_t bit patterns, converted with IEEE
/// round-to-nearest-even, so the rounding, overflow and underflow a GPU run would see are real.
#pragma once

#include <cstdint>
#include <span>

#include "common/dtype.h"

namespace book::train {

// A training run's precision is a book::DType (common/dtype.h): DType::kF32 (everything in
// FP32), DType::kBF16 (BF16 storage: FP32's range, 8 significant bits) or DType::kF16 (FP16
// storage: max 65504, 11 significant bits; needs loss scaling). DType::kF64 is not a training
// precision. The conversions themselves are common/float16.h's, shared by chapters 2-4.

/// Encodes `value` in `precision` (kBF16 or kF16; throws book::Error for the others).
std::uint16_t encode(DType precision, float value);
/// Decodes bits of `precision` (kBF16 or kF16; throws book::Error for the others).
float decode(DType precision, std::uint16_t bits);
/// The nearest value of `precision` to `value`, as a float (identity for kF32 and kF64).
float round_to(DType precision, float value);

/// Dynamic loss scaling (as in PyTorch's GradScaler): the loss is multiplied by scale() before
/// the backward pass so small gradients survive FP16's underflow; a step whose gradients hold an
/// inf or NaN is skipped and the scale halved; after growth_interval clean steps it doubles.
class LossScaler {
 public:
  /// The knobs, with PyTorch's defaults.
  struct Options {
    float initial_scale = 65536.0f;  ///< 2^16
    float growth_factor = 2.0f;      ///< multiply by this after growth_interval clean steps
    float backoff_factor = 0.5f;     ///< multiply by this after an overflow
    int growth_interval = 2000;      ///< clean steps before growing
    float min_scale = 1.0f;          ///< never back off below this
    float max_scale = 16777216.0f;   ///< never grow above this (2^24)
  };

  /// A scaler with `options` (checked: positive scales, factors on the right side of 1).
  explicit LossScaler(Options options);
  /// A scaler with the default options.
  LossScaler() : LossScaler(Options{}) {}

  /// The current scale.
  float scale() const { return scale_; }
  /// Clean steps since the last growth or overflow.
  int clean_steps() const { return clean_steps_; }
  /// The options in use.
  const Options& options() const { return options_; }
  /// Restores the state saved from scale() and clean_steps() (for checkpoints).
  void restore(float scale, int clean_steps);

  /// Exercise train.loss_scaler: call once per step after the backward pass, with whether any
  /// gradient was inf or NaN. On overflow: backs off (not below min_scale), resets the clean
  /// count and returns false (skip the step). Otherwise counts a clean step, grows the scale (not
  /// above max_scale) when the count reaches growth_interval (resetting it), and returns true.
  bool update(bool found_nonfinite);

 private:
  Options options_;
  float scale_;
  int clean_steps_ = 0;
};

}  // namespace book::train
