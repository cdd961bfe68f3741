/// @file
/// The `memory` stage in named sections (memory.cc calls them in order), one per README section:
/// each measures or computes what its section shows, prints its tables, writes its CSV and JSON
/// under results/, and hands back its tour lines, which the stage prints at the end with --tour.
#pragma once

#include <cstdint>
#include <string>

namespace book::mem::stage {

/// The stage's command line.
struct StageOptions {
  bool tour = false;    ///< also print the tour's headline lines (the run itself is the same)
  double gpu_gib = 80;  ///< the GPU's memory: the ladder's "fits" column and the colocated-RL table
  int steps = 1;        ///< training steps per measured configuration
};

/// Parses the command line and refuses a --gpu-gib too small for the colocated-RL table before
/// anything is measured. Throws book::UsageError for a bad command line (book::HelpRequested for
/// --help), book::Error for a GPU too small.
StageOptions parse_stage_options(int argc, const char* const* argv);

/// The headline lines one section hands back for the tour, each ending in a newline.
using TourLines = std::string;

/// "Measured = predicted": chapter 4's Trainer, one step, every category measured against the
/// prediction (3 precisions × micro-batches 8 and 32); gradient accumulation on the same trainer;
/// chapter 6's ZeRO trainer, stages 0–2 at N = 2, 4, against `zero_model_states`. Tour lines: the
/// trainer's equality, ZeRO's, accumulation's activations.
TourLines measured_section(const StageOptions& options);

/// "Attention without the T × T matrix": the tiled attention against chapter 4's at T = 10, 1024,
/// 2048, bytes held and the largest difference.
TourLines flash_section(const StageOptions& options);

/// "Fragmentation: the caching allocator": two trainers' allocation logs replayed through the
/// simulator, default and with expandable segments; the picture's timeline.
TourLines allocator_section(const StageOptions& options);

/// "Optimizer-state offload": the book model's AdamW state refused by a device arena of 8 B/param,
/// then held with the state on the host; the bytes moved per step.
TourLines offload_section(const StageOptions& options);

/// "Recomputation": a 4-block model's stored activations against the checkpointed backward's
/// buffers, the gradients compared bit for bit.
TourLines recompute_section(const StageOptions& options);

/// "The OOM ladder on the real trainer": chapter 4's Trainer with the remedies switched on one
/// after another, at two contexts, measured against `predict_remedies`.
TourLines real_ladder_section(const StageOptions& options);

/// "The OOM ladder": Llama-2 7B at 4096 tokens, the remedies in order (the calculator).
TourLines ladder_section(const StageOptions& options);

/// "The OOM ladder", its picture's data: Llama-2 7B by category against sequence length and ZeRO
/// stage.
void sweep_section(const StageOptions& options);

/// "Colocated RL memory": Llama-2 7B's ZeRO-3 training state and a full-model engine on one GPU,
/// colocated and time-sliced, each with its largest KV pool; the refusal of the larger pool.
TourLines colocated_rl_section(const StageOptions& options);

/// Refuses (book::Error naming --gpu-gib and the smallest size that works) a GPU of `gpu_gib` GiB
/// too small for the colocated placement's one KV block.
void check_gpu_holds_rl(double gpu_gib);

/// "MFU vs HFU": model and hardware FLOPs per token for Llama-2 7B and GPT-3 175B.
void mfu_section(const StageOptions& options);

/// Bytes in GiB with two decimals: "12.55".
std::string gib(std::uint64_t bytes);

}  // namespace book::mem::stage
