/// @file
/// The third dimension: DP × TP × PP. One rank-grid object (chapter 3's ProcessGrid) splits the
/// world into its tensor-, data- and pipeline-parallel groups; each pipeline stage is a chapter-4
/// Model part holding only its tensor-parallel slice of each block and of the vocabulary, run
/// through chapter 7's tensor-parallel seam over the TP group (TensorParallelSeam over a
/// TensorParallelGroup, as chapter 7's ranks are); the schedule runs over the PP group and the
/// gradients are averaged over the DP group. With 8 thread ranks as 2 × 2 × 2, every rank of a
/// stage holds half of each block's heads and MLP units and half the vocabulary's rows of the
/// embedding and the LM head, and two replicas of the two-stage pipeline each run half the
/// micro-batches.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "chapters/03_collectives/communicator.h"
#include "chapters/03_collectives/process_grid.h"
#include "chapters/04_training_baseline/config.h"
#include "chapters/04_training_baseline/data.h"
#include "chapters/04_training_baseline/model.h"
#include "chapters/07_tensor_parallel/tensor_parallel_group.h"
#include "chapters/07_tensor_parallel/tensor_parallel_seam.h"
#include "chapters/08_pipeline_parallel/executor.h"

namespace book::pp {

/// Refuses, before any rank starts, degrees that do not fit: `world_size` must be at least 1
/// and dp·tp·pp (computed in 64 bits) equal to it, tp
/// must divide the heads and the vocabulary, pp must be the schedule's p, and p·v must divide the
/// layers (each stage the same number of layers). Each message names the numbers that disagree.
void check_3d(const train::Config& config, const coll::GridDegrees& degrees, int world_size,
              const Shape& shape);

/// Runs `schedule` over `grid`'s pp() group with `chunks` (whose blocks may be tensor-parallel
/// slices over grid.tp()), then averages every chunk's gradients and the loss over grid.dp().
/// Afterwards every rank holds its slice of the gradient of the mean loss over all dp·m
/// micro-batches. Throws book::Error if a chunk's tensor-parallel slice is not the grid's
/// (size tp, rank the grid's tp coordinate).
template <typename T>
RankResult execute_3d(coll::ProcessGrid& grid, const Schedule& schedule,
                      std::span<const std::unique_ptr<train::Model<T>>> chunks,
                      std::span<const train::Batch> micro_batches,
                      const ExecuteOptions& options = {});

/// One rank of a DP × TP × PP run, built by every rank of `world` together: the grid, the
/// tensor-parallel group over grid().tp() with the seam its chunks share, and this rank's chunks
/// (its stage's layers, its TP slice, the vocabulary split when tp > 1, initialised from `seed`
/// as the one-device model is). check_3d runs first, so bad
/// degrees are refused on every rank alike before a message is sent.
template <typename T>
class Rank3D {
 public:
  /// The rank of `world` at its place in a grid of `degrees` running pipelines of `shape`.
  Rank3D(coll::Communicator& world, const coll::GridDegrees& degrees, const train::Config& config,
         int max_batch, const Shape& shape, std::uint64_t seed);

  /// One step: execute_3d over this rank's replica's `micro_batches` (m of them).
  RankResult step(const Schedule& schedule, std::span<const train::Batch> micro_batches,
                  const ExecuteOptions& options = {});

  coll::ProcessGrid& grid() { return grid_; }  ///< the groups and this rank's coordinates
  /// This rank's chunks (a Model part each).
  std::span<const std::unique_ptr<train::Model<T>>> chunks() const { return chunks_; }
  /// The tensor-parallel group: its counts() hold the collectives this rank's chunks called.
  tp::TensorParallelGroup<T>& tensor_parallel() { return *tensor_parallel_; }

 private:
  coll::ProcessGrid grid_;
  std::unique_ptr<tp::TensorParallelGroup<T>> tensor_parallel_;
  std::unique_ptr<tp::TensorParallelSeam<T>> seam_;
  std::vector<std::unique_ptr<train::Model<T>>> chunks_;
};

}  // namespace book::pp
