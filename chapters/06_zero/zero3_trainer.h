/// @file
/// ZeRO stage 3 (FSDP): the parameters are sharded too. Each rank keeps 1/N of every layer's
/// weights, gradients, FP32 master and Adam moments (16 bytes per parameter it owns, nothing of
/// the rest); the model it runs is chapter 4's Model built without parameter storage
/// (ModelOptions::own_parameters = false) and pointed, layer by layer, at gather buffers:
///
/// - forward: all-gather a layer's parameters just before it runs, drop them after (the buffer is
///   reused two layers later);
/// - backward: all-gather them again, run the layer's backward into a layer-sized gradient
///   buffer, reduce-scatter that gradient at once into this rank's shard, drop it;
/// - the optimizer updates the shard (zero.shard_optimizer_step, as ZeRO-1/2); nothing is
///   all-gathered after it: the next forward gathers what it needs.
///
/// The units gathered are the layout's ranges: the embeddings (wte, wpe), each block, the final
/// LayerNorm; each is sharded with shard_of (uneven shards, no padding; sharding.h). The
/// embeddings and the final LayerNorm are one unit, the "outer" one, since the tied wte is read at
/// both ends: gathered before embed_forward and kept to head_forward, gathered again before
/// head_backward and kept to embed_backward (PyTorch keeps its root unit gathered in between; this
/// book gathers it twice so that every parameter is gathered exactly twice per micro-batch).
///
/// Prefetch: every gather and reduce-scatter runs on chapter 3's AsyncCommunicator; the next
/// layer's gather is started before the current layer computes, so in the per-rank trace the
/// "comm" lane's gather of layer l+1 lies under the "compute" lane's layer l.
///
/// Gradient accumulation: each micro-batch's layer gradients are reduce-scattered as they come
/// (a rank has no full gradient to accumulate into) and added to the shard, so the traffic is
/// 3Ψ(N−1)/N per rank per micro-batch.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
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
#include "chapters/05_data_parallel/sampler.h"
#include "chapters/06_zero/sharding.h"
#include "chapters/06_zero/zero_options.h"
#include "chapters/06_zero/zero_trainer.h"
#include "common/memory.h"
#include "common/rng.h"

namespace book::zero {

/// The units ZeRO-3 gathers, as shard-plan buckets (from the end of the buffer down to 0): the
/// final LayerNorm, blocks L−1 .. 0, the embeddings.
std::vector<ddp::FlatRange> zero3_units(const train::ParameterLayout& layout);

/// Bytes of one ZeRO-3 rank's gather and reduce buffers (kCommunication) for the whole model of
/// `layout` planned as `plan`: with U the largest block and O = |embeddings| + |final LayerNorm|,
/// FP32: (2U + O) gathered parameters + (2U + O) gradients + the largest piece (where a
/// reduce-scatter lands before it is added to the shard), 4 bytes each; mixed precision: one
/// 16-bit staging buffer of the largest unit (gathers and reduce-scatters take turns on the
/// communication thread) + the largest piece, 2 bytes each (the FP32 copies the CPU computes on
/// are kOther, as chapter 4's).
std::uint64_t zero3_communication_bytes(const train::ParameterLayout& layout, const ShardPlan& plan,
                                        DType precision);

/// Exact traffic of one ZeRO-3 step of `micro_batches` micro-batches for rank plan.rank: per unit
/// and micro-batch two ring all-gathers (|b| − s_{r+1} elements each) and a ring reduce-scatter
/// (|b| − s_r): 3Ψ(N−1)/N per rank per micro-batch on average, 1.5× DDP's 2Ψ(N−1)/N.
StepTraffic zero3_traffic_per_step(const ShardPlan& plan, DType precision, int micro_batches);

/// One rank's end of a ZeRO-3 run (options.stage must be kZero3). Every rank builds one with
/// equal options (checked) and calls step() and master_weights() together.
class Zero3Trainer : private train::StepParts {
 public:
  /// Checks the options and that every rank has the same, initialises this rank's shard with
  /// chapter 4's init (every rank the same values), plans the units and starts the communication
  /// thread. Collective. Allocations report to `tracker` (not owned), or the trainer's own.
  /// `prefetch` false: each gather is started only when its layer is about to run (the bench's
  /// peer).
  Zero3Trainer(coll::Communicator& comm, const ZeroOptions& options,
               MemoryTracker* tracker = nullptr, bool prefetch = true);
  ~Zero3Trainer();
  Zero3Trainer(const Zero3Trainer&) = delete;             ///< Owns a thread.
  Zero3Trainer& operator=(const Zero3Trainer&) = delete;  ///< Owns a thread.

  /// One optimizer step over options.train.accumulation global micro-batches. Collective.
  /// @throws book::Error on every rank, naming the step, before any update, if the loss or the
  /// gradients are not finite (train::check_not_diverged; FP16's scaler skips such a step).
  train::StepResult step();
  /// This rank's gather and reduce-scatter traffic in the last step().
  const StepCounts& last_counts() const { return counts_; }
  /// This rank's shard plan (one bucket per unit).
  const ShardPlan& plan() const { return plan_; }
  /// The tracker every buffer of this rank reports to.
  const MemoryTracker& memory_tracker() const { return *tracker_; }
  /// The model-state bytes this rank holds now, read from the tracker's categories.
  ModelStateBytes measured_model_state() const;
  /// All Ψ FP32 master weights, all-gathered (for tests; not counted). Collective.
  std::vector<float> master_weights();
  /// This rank's shards of the FP32 master weights, one span per unit: what its optimizer
  /// updates, and (in FP32) what the next forward gathers. Writable, for a test that plants a
  /// fault (a NaN, as a bad update would leave).
  std::vector<std::span<float>> master_pieces();
  /// Writes a sharded checkpoint into `dir`, as ZeroTrainer::save (the pieces are this run's
  /// units' shards). Collective.
  void save(const std::string& dir);
  /// Reads a sharded checkpoint of any stage and N of the same model and precision, as
  /// ZeroTrainer::load; the weights are gathered by the next forward. Collective.
  void load(const std::string& dir);
  const ZeroOptions& options() const { return options_; }  ///< Resolved options.
  std::int64_t steps_done() const { return step_; }        ///< Optimizer steps so far.

 private:
  bool mixed() const { return options_.train.precision != DType::kF32; }
  std::span<float> master_piece(std::size_t unit);
  std::size_t slot_of(std::size_t unit) const;
  std::span<float> params_of(std::size_t unit);
  std::span<float> grads_of(std::size_t unit);
  coll::CollectiveHandle gather(std::size_t unit);
  coll::CollectiveHandle reduce(std::size_t unit);
  void bind(std::size_t unit);
  train::StepSpan span(std::string name, std::string category);
  // ZeRO-3's parts of chapter 4's run_step: the gathers and reduce-scatters are in micro_batch.
  void zero_gradients() override;
  train::Batch next_batch() override;
  double micro_batch(const train::Batch& batch, float loss_scale, bool last) override;
  float mean_loss(double loss_sum, int micro_batches) override;
  bool unscale_gradients(float loss_scale) override;
  double clip_and_update(float lr) override;

  coll::Communicator& comm_;
  ZeroOptions options_;
  bool prefetch_;
  int local_batch_;
  train::AdditionTask task_;
  MemoryTracker own_tracker_;
  MemoryTracker* tracker_;
  train::Model<float> model_;  // owns no parameters: bound to the gather buffers
  train::Activations<float> acts_;
  ShardPlan plan_;  // buckets = units: [0] final LayerNorm, [1..L] blocks L−1..0, [L+1] embeddings
  std::size_t largest_block_ = 0;
  TrackedBuffer<float> master_;             // S_r FP32: the weights (FP32) or the master (mixed)
  TrackedBuffer<std::uint16_t> shard16_;    // mixed: S_r 16-bit weights, what is gathered
  TrackedBuffer<float> grad32_;             // FP32: S_r gradients; mixed: decoded (kOther)
  TrackedBuffer<std::uint16_t> grad16_;     // mixed: S_r 16-bit gradients
  std::vector<train::AdamWState> adam_;     // one per unit
  TrackedBuffer<float> block_params_;       // 2 slots of the largest block
  TrackedBuffer<float> block_grads_;        // 2 slots
  TrackedBuffer<float> outer_params_;       // embeddings, then the final LayerNorm
  TrackedBuffer<float> outer_grads_;        // same
  TrackedBuffer<std::uint16_t> staging16_;  // mixed: one unit on the wire
  TrackedBuffer<float> receive32_;          // FP32: a reduced piece before it is added
  TrackedBuffer<std::uint16_t> receive16_;  // mixed: same
  TrackedBuffer<float> add_scratch_;        // mixed: the CPU's FP32 add of two 16-bit pieces
  std::array<std::optional<coll::CollectiveHandle>, 2> pending_reduce_;  // per gradient slot
  train::LossScaler scaler_;
  Rng data_rng_;
  ddp::DistributedSampler sampler_;
  std::unique_ptr<coll::AsyncCommunicator> async_;
  StepCounts counts_;
  std::int64_t step_ = 0;
};

}  // namespace book::zero
