/// @file
/// AdamW's update of one span and the learning-rate schedule. The update over a range of the
/// flat buffer, with its state, is in adamw_state.h; clipping in clipping.h.
#pragma once

#include <cstdint>
#include <span>

namespace book::train {

/// AdamW's hyper-parameters (Loshchilov & Hutter, "Decoupled Weight Decay Regularization").
struct AdamWConfig {
  float beta1 = 0.9f;         ///< decay of the first moment (mean of gradients)
  float beta2 = 0.95f;        ///< decay of the second moment (mean of squared gradients)
  float epsilon = 1e-8f;      ///< added to √v̂ so a zero second moment does not divide by zero
  float weight_decay = 0.1f;  ///< decoupled decay rate (0 for gains and biases)
};

/// Throws book::Error unless 0 <= beta1 < 1, 0 <= beta2 < 1, epsilon is positive and finite and
/// weight_decay is finite and >= 0. A beta of 1 makes the bias correction 1 - β^t zero (m / 0),
/// a negative one flips the moments' sign every step, and a NaN epsilon makes every update NaN:
/// each would turn the loss into NaN after the first step.
void validate(const AdamWConfig& config);

/// The largest peak learning rate learning_rate() accepts. AdamW moves every weight by about lr
/// per step whatever the gradient's size, and the weights are about 0.02: a rate above 1 can only
/// diverge (the book's runs peak at 3e-3).
inline constexpr float kMaxLearningRate = 1.0f;

/// Exercise train.adamw_step: one AdamW update of params in place, with FP32 moments m and v
/// (same length as params and grads, updated in place). `step` counts updates from 1 (it sets
/// the bias corrections 1 - β^step). The weight decay is decoupled: params shrink by
/// lr · weight_decay · param, independent of the gradient and of v, i.e.
///   m = β₁m + (1-β₁)g,  v = β₂v + (1-β₂)g²,  m̂ = m/(1-β₁ᵗ),  v̂ = v/(1-β₂ᵗ),
///   param -= lr · (m̂ / (√v̂ + ε) + weight_decay · param).
void adamw_step(std::span<float> params, std::span<const float> grads, std::span<float> m,
                std::span<float> v, std::int64_t step, float lr, const AdamWConfig& config);

/// Linear warm-up from 0 to max_lr over warmup_steps, then cosine decay to min_lr at total_steps,
/// min_lr after. `step` counts from 1. Throws book::Error on a bad schedule: steps out of order,
/// or rates that are not 0 <= min_lr <= max_lr <= kMaxLearningRate (NaN and infinity included).
float learning_rate(std::int64_t step, std::int64_t warmup_steps, std::int64_t total_steps,
                    float max_lr, float min_lr);

}  // namespace book::train
