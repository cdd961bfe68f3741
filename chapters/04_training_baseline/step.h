/// @file
/// The training step's first piece: forward and backward of one micro-batch.
///
/// A training step is a composition of public pieces, so the parallel chapters can put their
/// communication between them (Trainer::step() is the one-device composition):
/// 1. forward_backward() for each micro-batch (gradients accumulate; a GradientReadyHook fires as
///    each layer's gradients are final: chapter 5 all-reduces buckets from it, chapter 6
///    reduce-scatters);
/// 2. mixed precision (mixed_precision.h): gradients through 16 bits, unscale, check finite;
/// 3. clipping (clipping.h): sum_of_squares of each part, one global clip_coefficient;
/// 4. adamw_update over a range of the flat buffer (adamw_state.h).
#pragma once

#include "chapters/04_training_baseline/data.h"
#include "chapters/04_training_baseline/model.h"

namespace book::train {

/// Forward and backward of one micro-batch through a model that holds every layer (a whole
/// model, or a tensor-parallel rank of one): returns the batch's mean loss, and adds
/// dLoss/dθ · loss_scale into model.grads() (call model.zero_grad() before the first
/// micro-batch of a step), calling `ready` as each layer's gradients are complete. `acts` holds
/// this micro-batch's activations (one per micro-batch in flight).
template <typename T>
T forward_backward(Model<T>& model, const Batch& batch, T loss_scale, Activations<T>& acts,
                   const GradientReadyHook& ready = {});

/// The same on the model's own Activations.
template <typename T>
T forward_backward(Model<T>& model, const Batch& batch, T loss_scale,
                   const GradientReadyHook& ready = {}) {
  return forward_backward(model, batch, loss_scale, model.activations(), ready);
}

}  // namespace book::train
