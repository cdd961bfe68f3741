/// @file
/// Chapter 4's training step on one tensor-parallel rank: the same initialisation, the same data
/// (every rank of the group draws the same micro-batches from the same stream), the same AdamW
/// and global-norm clipping, composed from chapter 4's public pieces (step.h), on chapter 4's
/// Model holding this rank's slice with this chapter's TensorParallelSeam. Replicated tensors get
/// the same gradients on every rank, so their copies stay equal; the global norm sums each rank's
/// shards and counts each replicated tensor once (Megatron-LM does the same). FP32 only: chapter
/// 4's mixed-precision emulation is not repeated here.
#pragma once

#include <cstdint>

#include "chapters/03_collectives/communicator.h"
#include "chapters/04_training_baseline/adamw_state.h"
#include "chapters/04_training_baseline/data.h"
#include "chapters/04_training_baseline/model.h"
#include "chapters/04_training_baseline/trainer.h"
#include "chapters/07_tensor_parallel/tensor_parallel_group.h"
#include "chapters/07_tensor_parallel/tensor_parallel_seam.h"
#include "common/memory.h"
#include "common/rng.h"

namespace book::tp {

/// One rank's share of a tensor-parallel training run.
class TensorParallelTrainer : private train::StepParts {
 public:
  /// Rank comm.rank() of comm.size() of the run `options` describes (its model shape, task,
  /// batch, schedule, seed; precision must be f32), sequence parallelism on or off. Every rank of
  /// `comm` builds one with the same options: a collective check (one all-gather of a
  /// fingerprint of the options and `sequence_parallel`) throws book::Error on every rank, naming
  /// the ranks that differ from rank 0, before anything is allocated. Allocations report to
  /// `tracker` (may be null).
  TensorParallelTrainer(const train::TrainOptions& options, coll::Communicator& comm,
                        SequenceParallel sequence_parallel, MemoryTracker* tracker = nullptr);

  /// One optimizer step over options.accumulation micro-batches (chapter 4's run_step with this
  /// rank's parts): the same loss, gradient norm and learning rate on every rank.
  /// @throws book::Error on every rank, naming the step, before any update, if the loss or the
  /// gradient norm is not finite (train::check_not_diverged).
  train::StepResult step();

  const train::TrainOptions& options() const { return options_; }  ///< with the task's shape
  train::Model<float>& model() { return model_; }                  ///< this rank's model
  train::Activations<float>& activations() { return acts_; }       ///< its micro-batch
  TensorParallelGroup<float>& group() { return group_; }           ///< its group (counted)
  TensorParallelSeam<float>& seam() { return seam_; }              ///< its model's seam
  std::int64_t steps_done() const { return step_; }                ///< steps so far

 private:
  // The tensor-parallel parts of run_step (step.h).
  void zero_gradients() override;
  train::Batch next_batch() override;
  double micro_batch(const train::Batch& batch, float loss_scale, bool last) override;
  void synchronize_gradients(bool last) override;
  float mean_loss(double loss_sum, int micro_batches) override;
  bool unscale_gradients(float loss_scale) override;
  double clip_and_update(float lr) override;

  train::TrainOptions options_;
  train::AdditionTask task_;
  coll::Communicator& comm_;
  TensorParallelGroup<float> group_;
  TensorParallelSeam<float> seam_;
  train::Model<float> model_;
  train::Activations<float> acts_;
  train::AdamWState adam_;
  Rng data_rng_;
  train::LossScaler scaler_;  // FP32 only: run_step reads its scale of 1, never updates it
  double squares_ = 0;        // this step's global Σ g², from unscale_gradients
  std::int64_t step_ = 0;
};

/// `options` with the addition task's vocabulary and context, as chapter 4's Trainer sets them.
train::TrainOptions with_task_shape(train::TrainOptions options);

}  // namespace book::tp
