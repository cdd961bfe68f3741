/// @file
/// A ZeRO training step (stages 0, 1 and 2) on chapter 4's model and chapter 5's data-parallel
/// loop. Every rank runs forward and backward on its 1/N of each global micro-batch, exactly as
/// chapter 5's DdpTrainer; what differs is what a rank keeps and what it sends:
///
/// | stage | gradients | optimizer | collectives per bucket |
/// |---|---|---|---|
/// | 0 (DDP) | all, all-reduced after backward | all elements, on every rank | all-reduce |
/// | 1 | all, reduce-scattered after backward | its pieces | reduce-scatter + all-gather |
/// | 2 | its pieces, reduce-scattered *during* backward | its pieces | reduce-scatter + all-gather
/// |
///
/// A rank's pieces are sharding.h's: in every bucket, the shard chapter 3's reduce_scatter gives
/// it. After its update, each rank's new weights go to every rank by one all-gather per bucket.
///
/// Memory: every buffer the trainer allocates reports to a MemoryTracker with its category, so the
/// model-state bytes can be compared with sharding.h's formulas exactly. In mixed precision the
/// model's FP32 weights and gradients are chapter 4's CPU emulation scratch (kOther, what a GPU
/// would not have); the 16-bit weights (kParameters), the 16-bit gradients (kGradients), the FP32
/// master (kMasterWeights) and Adam's moments (kOptimizerStates) are the model state.
///
/// Communicators: the caller's (`comm`) carries the checks, the loss, the finite flag and the
/// norm; gradients and weights go over a group split off it (stages 0–1 and every all-gather) and,
/// for stage 2, an AsyncCommunicator's (the reduce-scatters that overlap backward), so their
/// counters hold exactly the traffic that sharding.h's traffic_per_step predicts.
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
#include "chapters/05_data_parallel/reducer.h"
#include "chapters/05_data_parallel/sampler.h"
#include "chapters/06_zero/sharding.h"
#include "chapters/06_zero/zero_options.h"
#include "common/memory.h"
#include "common/rng.h"

namespace book::zero {

/// What one rank's last step sent on the gradient and weight communicators (exact counters).
struct StepCounts {
  std::int64_t collectives = 0;     ///< reduce-scatters, all-gathers and all-reduces started
  std::uint64_t bytes_sent = 0;     ///< bytes this rank sent in them
  std::uint64_t messages_sent = 0;  ///< messages this rank sent in them
};

/// resolve(options) on every rank, and a check (one all-gather of fingerprints) that every rank
/// has the same; throws book::Error naming the first rank that differs. `sharded_parameters`:
/// the caller is ZeRO-3's trainer (stage 3 required), else stage 3 is refused. Collective.
ZeroOptions checked_options(coll::Communicator& comm, const ZeroOptions& options,
                            bool sharded_parameters);

/// Chapter 5's data path: draw the global micro-batch of `micro_batch` sequences from `rng` and
/// keep the rows `sampler` gives this rank. Requires sampler.options().dataset_size ==
/// micro_batch (the sampler indexes the micro-batch); throws book::Error otherwise.
train::Batch local_batch(const train::AdditionTask& task, Rng& rng,
                         const ddp::DistributedSampler& sampler, int micro_batch);

/// What a sharded checkpoint saves and restores of one rank (zero_checkpoint.cc), for ZeroTrainer
/// and Zero3Trainer alike: both own pieces of the flat buffer. Pointers, not owned.
struct ShardedState {
  coll::Communicator* comm = nullptr;              ///< every rank of the run
  const ZeroOptions* options = nullptr;            ///< the run's resolved options
  const ShardPlan* plan = nullptr;                 ///< this rank's pieces
  std::vector<std::span<float>> master;            ///< FP32 master weights, one span per piece
  std::vector<train::AdamWState>* adam = nullptr;  ///< Adam's moments, one per piece
  std::int64_t* step = nullptr;                    ///< optimizer steps done
  Rng* data_rng = nullptr;                         ///< the data stream
  train::LossScaler* scaler = nullptr;             ///< the loss scale
  bool replicated = false;  ///< stage 0: every rank holds everything, rank 0 alone writes
};

/// ZeroTrainer::save's body, atomic as a whole (the way PyTorch's distributed checkpoint and
/// Orbax make sharded saves safe): rank 0 picks the next *generation* g (one above any shard file
/// in `dir`); each writing rank writes `shard-<r>.g<g>.ckpt` under a new name, never over the
/// committed one; every rank learns whether every write succeeded; only then rank 0 writes
/// `manifest.ckpt` (naming g and the shards' checksums) with chapter 4's write_atomically, whose
/// rename is the one commit point; after it, rank 0 removes the other generations' files. A save
/// that fails on any rank, or a process killed at any point before the rename, leaves the
/// previous checkpoint loadable bit for bit; every rank throws book::Error naming the ranks that
/// failed (a rank whose write fails still takes part, so nobody waits for it). Refuses an empty
/// `dir` and a `dir` that is a file. Collective.
void save_sharded(const std::string& dir, const ShardedState& state);

/// Reads the committed sharded checkpoint in `dir` back without a run: its manifest and every
/// shard it names (present, its checksum the manifest's, chapter 4's reader's checks). Files a
/// killed save left beside them are not part of it and not read. Throws book::Error naming what
/// does not verify. For a supervisor choosing the newest checkpoint that verifies.
void verify_sharded_checkpoint(const std::string& dir);

/// The committed shard `rank` of the sharded checkpoint in `dir` (from its manifest's generation):
/// what a test damages, or a tool copies. Throws book::Error when `dir` has no readable manifest.
std::string committed_shard_path(const std::string& dir, int rank);

/// Where a sharded save is made to die, for the tests of its atomicity: the process exits at once
/// (std::_Exit(kSaveCrashExitCode)), with no cleanup, as a machine losing power would.
enum class SaveCrashPoint {
  kNone,           ///< never (the default)
  kAfterPrepare,   ///< rank 0 has made the folder and chosen the generation; no shard written
  kAfterShards,    ///< every shard of the new generation written; manifest not yet
  kAfterCommit,    ///< the manifest renamed into place; the old generation not yet removed
};
/// The exit code of a save killed by the seam.
inline constexpr int kSaveCrashExitCode = 86;
/// A seam for tests: the next sharded saves in this process die at `point` (kNone cancels).
void crash_sharded_save_at(SaveCrashPoint point);
/// ZeroTrainer::load's body, up to the weights' all-gather: checks the manifest and every shard
/// (naming a missing or corrupted one, a shard count or piece the files cannot hold, and chapter
/// 4's checks: counts a run can reach, finite weights and moments, a data stream that is not all
/// zeros, a loss scale in range), reshards into temporaries, and only then restores this rank's
/// pieces, the step, the data stream and the loss scale: a refused checkpoint changes nothing.
/// Collective.
void load_sharded(const std::string& dir, const ShardedState& state);

/// One rank's end of a ZeRO run (stages 0–2; stage 3 is zero3_trainer.h's). Every rank builds
/// one with equal options (checked) and calls step() and master_weights() together.
class ZeroTrainer : private train::StepParts {
 public:
  /// Checks the options (resolve) and that every rank has the same (fingerprint), builds and
  /// initialises the replica (chapter 4's init with the run's seed), copies this rank's pieces
  /// into its master weights, plans the shards and splits the communicators. Collective.
  /// Allocations report to `tracker` (not owned; must outlive the trainer), or the trainer's own.
  ZeroTrainer(coll::Communicator& comm, const ZeroOptions& options,
              MemoryTracker* tracker = nullptr);
  ~ZeroTrainer();
  ZeroTrainer(const ZeroTrainer&) = delete;             ///< Owns a model and a thread.
  ZeroTrainer& operator=(const ZeroTrainer&) = delete;  ///< Owns a model and a thread.

  /// One optimizer step over options.train.accumulation global micro-batches. Collective. The
  /// loss is the mean over all ranks' sequences, as chapter 4's Trainer::step reports it.
  /// @throws book::Error on every rank, naming the step, before any update, if the loss or the
  /// gradients are not finite (train::check_not_diverged; FP16's scaler skips such a step).
  train::StepResult step();
  /// This rank's traffic in the last step().
  const StepCounts& last_counts() const { return counts_; }

  /// This rank's shard plan.
  const ShardPlan& plan() const { return plan_; }
  /// The tracker every buffer of this rank reports to.
  const MemoryTracker& memory_tracker() const { return *tracker_; }
  /// The model-state bytes this rank holds now, read from the tracker's categories.
  ModelStateBytes measured_model_state() const;
  /// The FP32 weights AdamW updates, all Ψ of them: each rank's pieces, all-gathered (for tests
  /// and checkpoints; FP32 traffic not counted in last_counts()). Collective.
  std::vector<float> master_weights();
  /// Writes a sharded checkpoint into folder `dir` (created if missing): each rank that owns
  /// pieces writes `shard-<r>.g<generation>.ckpt` (its pieces of the master weights and of Adam's
  /// moments; stage 0: rank 0 alone, every rank holds everything) in chapter 4's format; then
  /// rank 0 commits `manifest.ckpt` (model, precision, step, data stream, loss scale, the
  /// generation, the number of shards and each shard file's FNV-1a checksum). Atomic as a whole:
  /// a failed or killed save leaves the previous checkpoint (save_sharded). Collective.
  void save(const std::string& dir);
  /// Reads a sharded checkpoint written by any number of ranks at any stage of the same model and
  /// precision: every rank reads the manifest and every shard (a teaching loader: a production
  /// one reads only the byte ranges that overlap its pieces), fills its own pieces (reshard, the
  /// exercise), and all-gathers the weights. Collective. Throws book::Error naming a missing or
  /// corrupted shard, a checkpoint of another model or precision, or contents chapter 4's
  /// Trainer::load would refuse (load_sharded); a refused load changes nothing.
  void load(const std::string& dir);
  std::int64_t steps_done() const { return step_; }        ///< Optimizer steps so far.
  const ZeroOptions& options() const { return options_; }  ///< Resolved options.
  train::Model<float>& model() { return model_; }          ///< This rank's replica.

 private:
  bool mixed() const { return options_.train.precision != DType::kF32; }
  std::span<float> master_piece(std::size_t i);
  std::vector<std::span<float>> master_pieces();
  coll::Buffer gradient_piece(std::size_t i);
  train::StepSpan span(std::string name, std::string category);
  void reduce_gradients();
  coll::CollectiveHandle launch_bucket(std::size_t index, const ddp::FlatRange& bucket);
  void publish_weights();
  // ZeRO-0/1/2's parts of chapter 4's run_step.
  void zero_gradients() override;
  train::Batch next_batch() override;
  double micro_batch(const train::Batch& batch, float loss_scale, bool last) override;
  void synchronize_gradients(bool last) override;
  float mean_loss(double loss_sum, int micro_batches) override;
  bool unscale_gradients(float loss_scale) override;
  double clip_and_update(float lr) override;
  coll::Counters gradient_counters() const;

  coll::Communicator& comm_;
  ZeroOptions options_;  // resolved and checked on every rank before anything is allocated
  int local_batch_;
  train::AdditionTask task_;
  MemoryTracker own_tracker_;
  MemoryTracker* tracker_;
  train::Model<float> model_;
  train::Activations<float> acts_;
  ShardPlan plan_;
  TrackedBuffer<float> master_;                    // mixed precision: this rank's pieces, FP32
  std::vector<train::AdamWState> adam_;            // one per piece
  TrackedBuffer<std::uint16_t> low_weights_;       // mixed precision: all Ψ 16-bit weights
  TrackedBuffer<std::uint16_t> low_grads_;         // mixed: Ψ (stages 0–1) or S_r (stage 2)
  TrackedBuffer<std::uint16_t> reduce_staging_;    // stage 2, mixed: the bucket being encoded
  TrackedBuffer<std::uint16_t> gather_staging16_;  // stages 1–2, mixed: a piece to all-gather
  TrackedBuffer<float> gather_staging32_;          // stages 1–2, FP32: a piece to all-gather
  train::LossScaler scaler_;
  Rng data_rng_;
  ddp::DistributedSampler sampler_;
  std::unique_ptr<coll::Communicator> zero_comm_;   // gradients (stages 0–1), all-gathers
  std::unique_ptr<coll::AsyncCommunicator> async_;  // stage 2's reduce-scatters
  std::unique_ptr<ddp::BucketReducer> reducer_;     // stage 2
  StepCounts counts_;
  std::int64_t step_ = 0;
};

}  // namespace book::zero
