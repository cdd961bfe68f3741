/// @file
/// A data-parallel training step: N replicas of chapter 4's model, each on 1/N of every global
/// micro-batch, their gradients averaged by the rung's collectives, then the same optimizer step
/// on every rank, so the replicas stay bit-identical. With the same TrainOptions it reproduces
/// chapter 4's one-device run: bit for bit at N = 1, within rounding at N > 1 (the batch's
/// gradient is summed in another order).
///
/// The step is chapter 4's run_step (step.h); this trainer supplies its parts:
/// 1. data: draw the global micro-batch from chapter 4's stream, keep this rank's rows (the
///    distributed sampler);
/// 2. forward, then backward with the reducer's hook (rungs 3 and 4: buckets start during
///    backward);
/// 3. the gradient synchronisation after each micro-batch's backward: a blocking all-reduce
///    (rungs 1 and 2), or waiting for the buckets backward started (rung 3; rung 4 on the last
///    micro-batch only);
/// 4. the mean loss over ranks (one FP64 number on the caller's communicator, not counted as
///    gradient traffic: it is only for the log);
/// 5. mixed precision, clipping, AdamW over the whole flat range, exactly as Trainer::step.
///
/// Communicators: the caller's (`comm`) carries the checks, the loss and the checkpoints' barriers;
/// gradients go over a group split off it (rungs 1–2, on this thread) or an AsyncCommunicator's
/// (rungs 3–4, on the communication thread), so their counters hold gradient bytes only. With
/// DdpOptions::hierarchical_ranks_per_node, that group is further split into nodes
/// (split_by_node) and every gradient all-reduce is hierarchical_all_reduce.
/// Traces: set a book::Trace on `comm` before building the trainer; the step's pieces go to lane
/// "compute" of the rank's track and the gradient collectives to lane "comm".
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "chapters/03_collectives/async.h"
#include "chapters/03_collectives/communicator.h"
#include "chapters/04_training_baseline/adamw_state.h"
#include "chapters/04_training_baseline/data.h"
#include "chapters/04_training_baseline/model.h"
#include "chapters/04_training_baseline/precision.h"
#include "chapters/04_training_baseline/step.h"
#include "chapters/04_training_baseline/trainer.h"
#include "chapters/05_data_parallel/ddp_options.h"
#include "chapters/05_data_parallel/hierarchical.h"
#include "chapters/05_data_parallel/reducer.h"
#include "chapters/05_data_parallel/sampler.h"
#include "common/rng.h"

namespace book::ddp {

/// Where one rank's step went, in seconds, and what it sent. Filled by every step().
struct StepTimes {
  double data = 0;       ///< drawing the batch and picking this rank's rows (+ an injected delay)
  double forward = 0;    ///< forward passes (+ an injected straggler delay)
  double backward = 0;   ///< backward passes (rungs 3–4: launching buckets included)
  double comm_wait = 0;  ///< exposed communication: this thread blocked on gradient collectives
  double comm_busy = 0;  ///< time the gradient collectives ran (rungs 3–4: on the comm thread)
  double loss_sync = 0;  ///< the loss's all-reduce: mostly waiting for the slowest rank's step
  double optimizer = 0;  ///< mixed precision, clipping, AdamW
  double step = 0;       ///< the whole step
  std::int64_t collectives = 0;         ///< gradient collectives started
  std::uint64_t gradient_bytes = 0;     ///< bytes this rank sent in them (counters)
  std::uint64_t gradient_messages = 0;  ///< messages this rank sent in them (counters)
  /// The share of the collectives' time that backward hid: 1 − comm_wait / comm_busy, clamped to
  /// [0, 1]; 0 when nothing was communicated.
  double hidden_fraction() const;
};

/// One rank's end of a data-parallel run. Every rank builds one with equal options (checked), and
/// calls step(), save(), load() and verify_replicas() together.
class DdpTrainer : private train::StepParts {
 public:
  /// Checks the options (resolve) and that every rank has the same (fingerprint, all-gathered),
  /// builds and initialises the replica (chapter 4's init with the run's seed), checks that every
  /// rank's initial weights are equal, and splits the gradient communicator(s). Collective.
  /// @throws book::Error naming the ranks whose options or weights differ from rank 0's.
  DdpTrainer(coll::Communicator& comm, const DdpOptions& options);
  ~DdpTrainer();
  DdpTrainer(const DdpTrainer&) = delete;             ///< Owns a model and a thread.
  DdpTrainer& operator=(const DdpTrainer&) = delete;  ///< Owns a model and a thread.

  /// One optimizer step over options.train.accumulation global micro-batches. Collective. The
  /// result is the one-device StepResult: loss is the mean over all ranks' sequences.
  /// @throws book::Error on every rank, naming the step, before any update, if the loss or the
  /// gradients are not finite (train::check_not_diverged; FP16's scaler skips such a step).
  train::StepResult step();
  /// This rank's times and traffic in the last step().
  const StepTimes& last_times() const { return times_; }

  /// FNV-1a of this rank's optimizer weights (the FP32 master copy) and of the weights the next
  /// forward pass reads.
  std::uint64_t parameter_fingerprint() const;
  /// All-gathers every rank's parameter_fingerprint() and throws book::Error naming the first
  /// rank whose weights differ from rank 0's. Collective.
  void verify_replicas();

  /// Rank 0 writes a checkpoint atomically (chapter 4's format and sections, so chapter 4's
  /// Trainer::load reads it), then every rank waits for it (barrier). Collective.
  void save(const std::string& path);
  /// Every rank reads the checkpoint, then verify_replicas(). Collective. The file gets chapter
  /// 4's checks (Trainer::load's: counts a run can reach, finite weights and moments, a data
  /// stream that is not all zeros, a loss scale in range) before anything changes: a refused load
  /// throws book::Error and leaves the trainer as it was.
  void load(const std::string& path);

  std::int64_t steps_done() const { return step_; }  ///< Optimizer steps so far.
  /// Tokens per step, all ranks together (= chapter 4's Trainer::tokens_per_step()).
  std::int64_t tokens_per_step() const;
  int local_micro_batch() const { return local_batch_; }  ///< Sequences per rank per micro-batch.
  const DdpOptions& options() const { return options_; }  ///< Resolved options.
  train::Model<float>& model() { return model_; }         ///< This rank's replica.
  std::span<const float> master_weights() const;          ///< The FP32 weights AdamW updates.
  const std::vector<FlatRange>& tensors() const { return tensors_; }  ///< Rung 1's ranges.
  const std::vector<FlatRange>& buckets() const { return buckets_; }  ///< Rungs 3–4's buckets.
  coll::Communicator& communicator() { return comm_; }                ///< The caller's.
  /// Bytes and messages sent on the gradient communicators since construction (call between steps).
  coll::Counters gradient_counters() const;

 private:
  bool mixed() const { return options_.train.precision != DType::kF32; }
  std::span<float> master();
  void refresh_low_weights();
  train::StepSpan span(const char* name, const char* category, double* seconds);
  bool synchronizes(bool last) const;
  // The data-parallel parts of chapter 4's run_step.
  void zero_gradients() override;
  train::Batch next_batch() override;
  double micro_batch(const train::Batch& batch, float loss_scale, bool last) override;
  void synchronize_gradients(bool last) override;
  float mean_loss(double loss_sum, int micro_batches) override;
  bool unscale_gradients(float loss_scale) override;
  double clip_and_update(float lr) override;
  coll::CollectiveHandle launch_bucket(std::size_t index, const FlatRange& bucket);
  // One gradient all-reduce (mean over ranks) on `comm`: flat, or hierarchical over nodes_.
  void all_reduce_gradients(coll::Communicator& comm, std::span<float> data);
  void sleep_for_link(std::size_t bytes) const;

  coll::Communicator& comm_;
  DdpOptions options_;  // resolved and checked on every rank before anything is allocated
  int local_batch_;
  train::AdditionTask task_;
  train::Model<float> model_;
  train::Activations<float> acts_;
  std::vector<float> master_;  // mixed precision only
  std::vector<std::uint16_t> low_weights_, low_grads_;
  train::AdamWState adam_;
  train::LossScaler scaler_;
  Rng data_rng_;
  DistributedSampler sampler_;
  std::vector<FlatRange> tensors_, buckets_;
  std::unique_ptr<coll::Communicator> grad_comm_;   // rungs 1–2
  std::unique_ptr<coll::AsyncCommunicator> async_;  // rungs 3–4
  std::unique_ptr<BucketReducer> reducer_;          // rungs 3–4
  // hierarchical sync only: split from the gradient communicator (rungs 1–2: grad_comm_, on this
  // thread; rungs 3–4: the communication thread's, on that thread)
  std::unique_ptr<NodeGroups> nodes_;
  std::vector<double> bucket_seconds_;              // written by the comm thread
  StepTimes times_;
  std::int64_t step_ = 0;
  double squares_ = 0;  // the step's sum of squared gradients, from unscale to clip
};

}  // namespace book::ddp
