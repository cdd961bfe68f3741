/// @file
/// The bench's shared settings and its per-layer table: where a training step's time goes on one
/// thread and on all of them (bench.cc prints it; the README quotes it).
#pragma once

#include <string>
#include <vector>

#include "chapters/04_training_baseline/trainer.h"

namespace book::train {

/// The sequences per micro-batch the bench measures.
inline constexpr int kBenchSequences[] = {32, 128};
/// The micro-batch of the per-layer table.
inline constexpr int kLayerTableSequences = 128;
/// Rounds of the per-layer table: each times some steps on one thread, then on all.
inline constexpr int kLayerTableRounds = 5;

/// The stage's model (2 layers, d_model 64, 4 heads, 3-digit addition) with `sequences` per
/// micro-batch, one micro-batch per step.
TrainOptions bench_options(int sequences);

/// 1 and the hardware threads (just 1 on a one-core machine).
std::vector<int> bench_thread_counts();

/// Times `rounds` rounds of training steps at `sequences` per micro-batch, each round on 1 thread
/// and then on all (sgemm's thread knob), with a LayerProfile; returns a Markdown table of each
/// kind of layer's median time per step on each, its share of the one-thread step and its
/// speed-up, largest first, with the step's remainder and its total.
std::string layer_table_markdown(int sequences, int rounds);

}  // namespace book::train
