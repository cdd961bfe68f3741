/// @file
/// The stage `tp` in named steps: its command line, the runs it measures (tensor and sequence
/// parallelism against chapter 4's one-device trainer; expert parallelism against the
/// single-rank MoE layer; the router's load balance under the auxiliary loss) and the tables and
/// tour lines it prints. tp.cc calls them in order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "chapters/04_training_baseline/trainer.h"
#include "chapters/07_tensor_parallel/bandwidth_model.h"
#include "chapters/07_tensor_parallel/conjugate.h"
#include "chapters/07_tensor_parallel/moe_routing.h"
#include "chapters/07_tensor_parallel/tensor_parallel_group.h"
#include "common/table.h"

namespace book::tp {

/// What the stage was asked to do.
struct StageOptions {
  bool tour = false;  ///< --tour: the short run whose headline lines //:tour prints
  int steps = 20;     ///< --steps: training steps per degree
  std::vector<int> degrees = {1, 2, 4};  ///< --degrees: tensor-parallel degrees (thread ranks)
  int micro_batch = 32;                  ///< --micro-batch: sequences per step
  int digits = 3;                        ///< --digits: operand digits of the addition task
  int layers = 2;                        ///< --layers
  int d_model = 64;                      ///< --d-model
  int heads = 4;                         ///< --heads
  int experts = 8;                       ///< --experts: of the MoE layer
  int moe_tokens = 512;                  ///< --moe-tokens: tokens per expert-parallel rank
  int balance_steps = 100;               ///< --balance-steps: router steps on the auxiliary loss
};

/// Parses argv. --tour shortens the runs (8 steps, 256 MoE tokens, 40 router steps) unless they
/// are given explicitly.
/// @throws book::UsageError for a bad command line; book::HelpRequested for --help.
StageOptions parse_stage_options(int argc, const char* const* argv);

/// Chapter 4's training run for `options` (FP32): the run every degree must reproduce.
train::TrainOptions stage_training(const StageOptions& options);

/// Chapter 4's one-device trainer: its losses and its median step time.
struct OneDeviceRun {
  std::vector<float> losses;  ///< one per step
  double step_ms = 0;         ///< median over steps 2 … N
};

/// `steps` steps of chapter 4's Trainer on one thread.
OneDeviceRun run_one_device(const train::TrainOptions& options, int steps);

/// One tensor-parallel degree, measured on thread ranks (rank 0's numbers; every rank's shard
/// has the same shape).
struct TensorParallelRow {
  int t = 1;                                 ///< ranks
  SequenceParallel sequence_parallel{};      ///< on or off
  std::size_t parameter_bytes = 0;           ///< this rank's parameters, measured
  std::size_t parameter_formula = 0;         ///< parameter_elements × 4
  std::size_t layer_activation_bytes = 0;    ///< one layer's saved activations, measured
  std::size_t layer_activation_formula = 0;  ///< accounting.h's formula
  double megatron_layer_bytes = 0;           ///< Korthikanti et al.'s, this shape
  CollectiveCounts layer_forward;            ///< one layer's forward collectives, counted
  CollectiveCounts layer_backward;           ///< one layer's backward collectives, counted
  std::uint64_t layer_bytes_sent = 0;        ///< one layer, forward + backward, measured
  std::uint64_t layer_bytes_formula = 0;     ///< the ring's formula
  std::uint64_t step_bytes_sent = 0;         ///< one micro-batch's whole step, measured
  std::uint64_t step_bytes_formula = 0;      ///< the ring's formula
  double step_ms = 0;                        ///< median training-step time
  double max_loss_deviation = 0;             ///< max over steps of |Δloss| / loss
};

/// `steps` steps of the same run on `t` thread ranks, with one extra micro-batch first, taken
/// through the model's pieces, to count one layer's and one step's traffic.
TensorParallelRow run_tensor_parallel(const train::TrainOptions& options, int t,
                                      SequenceParallel sequence_parallel, int steps,
                                      const OneDeviceRun& one_device);

/// The table of the tensor-parallel rows (bytes per rank, traffic, time, deviation).
Table tensor_parallel_table(const std::vector<TensorParallelRow>& rows, const OneDeviceRun& one);

/// The bandwidth model's table: GPT-3 175B's per-layer tensor-parallel traffic against NVLink and
/// the network, and a pipeline boundary's.
Table bandwidth_table(const std::vector<BandwidthRow>& rows);

/// One expert-parallel degree: the MoE layer on `ep` thread ranks (rank 0's traffic).
struct ExpertParallelRow {
  int ep = 1;                        ///< ranks
  int tokens = 0;                    ///< tokens per rank
  int kept = 0;                      ///< rank 0's choices that reached an expert
  int dropped = 0;                   ///< rank 0's choices dropped for capacity
  std::size_t rows_to_others = 0;    ///< rank 0's rows dispatched to other ranks
  std::uint64_t bytes_sent = 0;      ///< rank 0's forward all-to-all bytes, measured
  std::uint64_t bytes_formula = 0;   ///< counts + rows out + rows back, × C × 4
  double max_over_mean_load = 0;     ///< the busiest expert's load over the mean (all ranks)
  double max_output_difference = 0;  ///< |y − the single-rank layer's y|, max over rank 0's
};

/// The MoE layer of `options` on 1, 2, 4, … ranks up to the experts (those dividing them).
std::vector<ExpertParallelRow> run_expert_parallel(const StageOptions& options);
/// Their table.
Table expert_parallel_table(const std::vector<ExpertParallelRow>& rows);

/// One step of the load-balance demonstration.
struct BalanceStep {
  int step = 0;              ///< router updates so far
  double aux_loss = 0;       ///< the load-balancing loss
  double dropped = 0;        ///< fraction of choices dropped
  double max_over_mean = 0;  ///< the busiest expert's assigned choices over the mean
  int capacity = 0;          ///< slots per expert
  std::vector<int> load;     ///< choices assigned per expert
};

/// A router that starts skewed (the tokens lean towards one expert) trained by plain gradient
/// descent on the load-balancing loss alone: its loss, drops and imbalance every few steps.
std::vector<BalanceStep> run_load_balance(const StageOptions& options);
/// Their table.
Table load_balance_table(const std::vector<BalanceStep>& steps);

/// The headline lines `tour: 07 | … | … | …`.
std::vector<std::string> tour_lines(const std::vector<TensorParallelRow>& rows,
                                    const OneDeviceRun& one,
                                    const std::vector<BandwidthRow>& bandwidth,
                                    const std::vector<ExpertParallelRow>& experts,
                                    const std::vector<BalanceStep>& balance);

}  // namespace book::tp
