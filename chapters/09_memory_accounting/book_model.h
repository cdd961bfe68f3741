/// @file
/// Measured = predicted on the book's model: chapter 4's Trainer reports every buffer to a
/// MemoryTracker; this predicts each category's bytes from the formulas alone (chapter 6's
/// model-state formula, chapter 4's documented activation and workspace layouts) and measures a
/// real step, so a test can say they are equal to the byte.
#pragma once

#include "chapters/04_training_baseline/trainer.h"
#include "common/memory.h"

namespace book::mem {

/// The bytes chapter 4's Trainer with `options` holds, by tracker category, from formulas:
/// - parameters, gradients, master weights, optimizer states: dp_model_states(Ψ, 1, DDP,
///   precision) — 2 + 2 + 4 + 8 = 16 bytes per parameter in mixed precision, 4 + 4 + 0 + 8 in
///   FP32 (the FP32 weights are their own master);
/// - activations: activations.h's per-row formula at micro_batch × context rows, in FP32
///   (token ids and targets as ints): 4·(2(L+1)C + L(3C + 4 + 4C + 2·4C + a·T) + C + 2 + 2V) + 8;
/// - other: the backward workspace (per row 3C + 2·4C + C + 3C, plus the head's V + C), and in
///   mixed precision the CPU's FP32 copies of the 16-bit weights and gradients (8Ψ).
/// Communication is 0: one device. Throws book::Error for options the Trainer refuses
/// (train::check_trainable: a micro-batch below 1, settings that can only diverge).
MemorySnapshot predict_trainer_memory(const train::TrainOptions& options);

/// Builds chapter 4's Trainer with `options` on a fresh tracker, runs `steps` optimizer steps
/// and returns each category's peak bytes.
MemorySnapshot measure_trainer_memory(const train::TrainOptions& options, int steps = 1);

}  // namespace book::mem
