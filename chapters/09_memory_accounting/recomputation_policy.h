/// @file
/// Activation recomputation (Korthikanti et al., "Reducing Activation Recomputation in Large
/// Transformer Models", 2022, §4–5) as chapter 4's activation policy (memory_seams.h): what each
/// micro-batch keeps of the model's blocks, and how each block's backward gets the rest back.
#pragma once

#include "chapters/04_training_baseline/memory_seams.h"
#include "chapters/09_memory_accounting/recomputation.h"

namespace book::mem {

/// The policy for `recomputation`, for the ModelOptions::activation_policy (or
/// TrainOptions::activation_policy) of chapter 4's model:
/// - kNone: empty, so the model keeps every block's activations;
/// - kSelective: every block keeps everything but what its attention core saves (chapter 4's
///   B·h·T·T probabilities, or a kernel's saved numbers); one block's worth of those is held,
///   written by each block's forward and rewritten from the block's q, k, v just before its
///   backward;
/// - kFull: one block's activations are held, refilled by each block's forward and again, from
///   the block's input (the residual stream, kept anyway), just before its backward: one extra
///   forward per step.
///
/// The recomputation runs the same deterministic kernels on the same numbers, so the gradients
/// equal the kNone run's bit for bit. Neither policy keeps a block's activations whole, so
/// Activations::block and layer_bytes refuse them.
template <typename T>
train::ActivationPolicy<T> recomputation_policy(Recomputation recomputation);

}  // namespace book::mem
