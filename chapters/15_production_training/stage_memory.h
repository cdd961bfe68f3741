/// @file
/// Stage boundaries balanced by compute and memory: the bytes each pipeline stage holds under
/// 1F1B, and chapter 8's partition (pp::partition_layers) with a per-stage memory limit. The
/// 3D planner (planner.h) cuts every plan's stages with it; a split that puts more bytes on a
/// stage than the device holds is not a split.
#pragma once

#include <optional>
#include <span>
#include <vector>

#include "chapters/08_pipeline_parallel/partition.h"

namespace book::prod {

/// A stage's memory under 1F1B: stage s of p holds its layers' states once and their
/// activations for p − s micro-batches in flight; the first also holds the embedding, the last
/// the head. Bytes per device.
struct StageMemory {
  std::vector<double> layer_state_bytes;       ///< per layer: weights, gradients, optimizer
  std::vector<double> layer_activation_bytes;  ///< per layer, per micro-batch in flight
  double first_bytes = 0;  ///< the embedding's states and activations (first stage)
  double last_bytes = 0;   ///< the head's states and activations (last stage)
  double fixed_bytes = 0;  ///< every stage: communication buffers, overhead
  double limit = 0;        ///< what a device holds
};

/// The bytes of each stage of `boundaries` (as pp::stage_costs cuts them). Throws book::Error
/// if the two per-layer vectors differ in length or the boundaries do not cut them.
std::vector<double> stage_bytes(const StageMemory& memory, const std::vector<int>& boundaries);

/// Chapter 8's partition (pp::partition_layers: minimise the slowest stage, the embedding's
/// cost on the first and the head's on the last) with one more rule: a stage whose bytes
/// (stage_bytes) exceed memory.limit is not a candidate. When partition_layers' own answer
/// fits, it is the answer (nothing faster exists); otherwise the same DP over (stages, layers)
/// runs with the cuts that do not fit left out; nullopt when no split fits. Throws book::Error as
/// partition_layers does, and if the memory's per-layer vectors are not one entry per layer.
std::optional<pp::Partition> partition_within_memory(std::span<const double> layer_costs,
                                                     int stages, double embed_cost,
                                                     double head_cost, const StageMemory& memory);

}  // namespace book::prod
