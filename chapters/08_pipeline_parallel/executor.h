/// @file
/// The executor: runs a schedule's action lists for real, one pipeline rank per Communicator rank
/// (threads by default), each rank holding its chunks as chapter 4 Model parts. Activations cross
/// each stage boundary forward and their gradients backward as send/recv of b·s·h elements; the
/// tied embedding's two gradients (first stage's and last stage's) are summed at the end.
///
/// In a split-backward schedule (ZB-H1), B runs block_backward_input (block_split.h) on each block
/// (the input gradient, and the LayerNorms' small parameter gradients) and keeps the four
/// weight matrices' output gradients; W runs block_backward_weight (block_split.h) on them and
/// releases the micro-batch. The head's and the embedding's backward run whole, in B.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "chapters/03_collectives/communicator.h"
#include "chapters/03_collectives/process_grid.h"
#include "chapters/04_training_baseline/data.h"
#include "chapters/04_training_baseline/model.h"
#include "chapters/08_pipeline_parallel/simulator.h"

namespace book {
class Trace;
}  // namespace book

namespace book::pp {

/// One action as run: its rank and the ticks of a clock shared by all ranks (taken once its
/// input had arrived, and once its computation ended, before its output was sent), and the
/// wall time of both in microseconds since the log began.
struct ExecutedAction {
  int rank = 0;                  ///< which rank ran it
  Action action;                 ///< what ran
  std::uint64_t start_tick = 0;  ///< shared clock at the start
  std::uint64_t end_tick = 0;    ///< shared clock at the end (before the send)
  double start_us = 0;           ///< wall time at the start
  double end_us = 0;             ///< wall time at the end
};

/// What every rank ran, for the dependency check and the measured timeline. Shared by the ranks
/// (thread-safe).
class ExecutionLog {
 public:
  ExecutionLog();
  /// The next tick of the shared clock.
  std::uint64_t tick() { return clock_.fetch_add(1) + 1; }
  /// Microseconds since the log was made.
  double now_us() const;
  /// Appends one action.
  void record(const ExecutedAction& action);
  /// Every action recorded so far.
  std::vector<ExecutedAction> actions() const;
  /// The measured timeline (wall times; busy = time inside actions) of the recorded run.
  Timeline timeline(const Shape& shape) const;

 private:
  std::atomic<std::uint64_t> clock_{0};
  mutable std::mutex mutex_;
  std::vector<ExecutedAction> actions_;
  long long origin_ns_;
};

/// What one rank saw.
struct RankResult {
  double loss = 0;           ///< the step's mean loss over micro-batches (on every rank)
  int peak_activations = 0;  ///< the most micro-batch activations this rank held at once
  coll::Counters traffic;    ///< sent and received by the schedule (not the embedding sync)
};

/// Where to record (both optional, not owned).
struct ExecuteOptions {
  Trace* trace = nullptr;       ///< each action as a box on lane "compute" of its rank
  ExecutionLog* log = nullptr;  ///< each action with its ticks
};

/// This rank's chunk models for a pipeline of `shape` over `config`: chunk c holds the layers of
/// virtual stage c·p + rank, [boundaries[vs], boundaries[vs+1]), with its share of the
/// initialisation from `seed`. `boundaries` has p·v + 1 cuts from 0 to n_layer (even_boundaries
/// or partition_layers). With a tensor-parallel `slice` of t > 1 ranks (3D runs, three_d.h) each
/// chunk holds only that slice (of its blocks, and of the vocabulary if the slice splits it) and
/// runs it through `tensor_parallel`, the rank's seam (required then, not owned; one seam serves
/// every chunk). Throws book::Error on bad cuts or a bad slice.
template <typename T>
std::vector<std::unique_ptr<train::Model<T>>> make_rank_models(
    const train::Config& config, int max_batch, const Shape& shape,
    const std::vector<int>& boundaries, int rank, std::uint64_t seed,
    const train::TensorParallelSlice& slice = {},
    train::TensorParallelism<T>* tensor_parallel = nullptr);

/// Runs `schedule` on this rank (comm.rank() is the pipeline rank; comm.size() must be p) with
/// `chunks` from make_rank_models, over `micro_batches` (m of them): zero_grad, then the
/// actions, then the tied embedding's gradient summed between the ranks holding the embedding
/// and the head. Afterwards each chunk's grads() hold the gradient of the mean loss. Every rank
/// calls it together. Throws book::Error if the sizes disagree.
template <typename T>
RankResult execute(coll::Communicator& comm, const Schedule& schedule,
                   std::span<const std::unique_ptr<train::Model<T>>> chunks,
                   std::span<const train::Batch> micro_batches, const ExecuteOptions& options = {});

/// Data parallelism around the pipeline (2D: DP × PP, chapter 3's ProcessGrid with tp = 1):
/// runs `schedule` over the grid's pp() group on this replica's `micro_batches`, then averages
/// every chunk's gradients, and the loss, over the grid's dp() group (an all-reduce per chunk).
/// Afterwards every replica holds the gradient of the mean loss over all D·m micro-batches.
/// Throws book::Error if the grid's tensor-parallel degree is not 1 or its pp() size is not p.
template <typename T>
RankResult execute_data_parallel(coll::ProcessGrid& grid, const Schedule& schedule,
                                 std::span<const std::unique_ptr<train::Model<T>>> chunks,
                                 std::span<const train::Batch> micro_batches,
                                 const ExecuteOptions& options = {});

/// The same step on one device: zero_grad, then forward_backward of each micro-batch in order
/// with loss scale 1/m; returns the mean loss.
template <typename T>
double single_device_step(train::Model<T>& whole, std::span<const train::Batch> micro_batches);

/// m micro-batches of `batch` sequences of `seq_len` random tokens and targets (none ignored)
/// from `seed`.
std::vector<train::Batch> random_micro_batches(const train::Config& config, int m, int batch,
                                               int seq_len, std::uint64_t seed);

}  // namespace book::pp
