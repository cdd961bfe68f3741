/// @file
/// Gradient clipping by global norm, in pieces a sharded caller can put together.
///
/// One device: clip_global_norm(grads, max_norm). A caller whose gradients are spread over
/// ranks (slices of the flat buffer, ranges of layers, slices of each block) computes
/// sum_of_squares of its own part, all-reduces the sums, turns the global sum into a factor with
/// clip_coefficient and scales its part by it: every rank applies the same factor. (Replicated
/// tensors must be counted once: a rank that holds a copy another rank also counts leaves it out
/// of its sum.)
#pragma once

#include <span>

namespace book::train {

/// Σ g², accumulated in double in element order.
double sum_of_squares(std::span<const float> grads);

/// The factor that brings a global norm √sum_of_squares down to max_norm: max_norm / norm (as a
/// float) when the norm exceeds max_norm, else exactly 1. Throws book::Error unless
/// max_norm > 0 and sum_of_squares >= 0.
float clip_coefficient(double sum_of_squares, double max_norm);

/// grads *= factor (nothing to do when factor is 1).
void scale_gradients(std::span<float> grads, float factor);

/// The L2 norm of all the gradients together: √sum_of_squares(grads).
double global_norm(std::span<const float> grads);

/// Scales grads by clip_coefficient(sum_of_squares(grads), max_norm); returns the norm before
/// clipping. The one-device composition of the pieces above.
double clip_global_norm(std::span<float> grads, double max_norm);

}  // namespace book::train
