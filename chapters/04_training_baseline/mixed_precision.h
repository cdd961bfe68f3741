/// @file
/// Mixed precision over a span: the pieces of a training step that move gradients and weights
/// through 16-bit storage, written over spans so a rank can run them on its shard.
///
/// The step (trainer.cc) runs them in this order:
/// 1. after backward, encode the FP32 gradients to 16 bits (what a GPU's 16-bit gradient buffer
///    would hold: FP16 overflows past 65504 and flushes below 2^-24) and decode them back;
/// 2. unscale them by the loss scale, in FP32;
/// 3. check they are all finite (with FP16, the loss scaler decides whether to skip the step);
/// 4. after the optimizer, encode the FP32 master weights to the 16-bit weights the next forward
///    pass reads, and decode those into the FP32 buffer the CPU kernels compute with.
/// A device that shares gradients with others could sum the 16-bit gradients with theirs between
/// 1 and 2.
#pragma once

#include <cstdint>
#include <span>

#include "chapters/04_training_baseline/precision.h"

namespace book::train {

/// bits[i] = encode(precision, values[i]). kBF16 or kF16; equal lengths. Throws book::Error
/// otherwise.
void encode(DType precision, std::span<const float> values, std::span<std::uint16_t> bits);

/// values[i] = decode(precision, bits[i]). kBF16 or kF16; equal lengths. Throws book::Error
/// otherwise.
void decode(DType precision, std::span<const std::uint16_t> bits, std::span<float> values);

/// True when every element is finite (no inf, no NaN).
bool all_finite(std::span<const float> values);

/// grads[i] /= loss_scale (a division, not a multiplication by 1/loss_scale, so a power-of-two
/// scale is undone exactly). Throws book::Error unless loss_scale > 0.
void unscale(std::span<float> grads, float loss_scale);

}  // namespace book::train
