/// @file
/// The training loop: micro-batches with gradient accumulation, mixed precision with FP32 master
/// weights and dynamic loss scaling, global-norm clipping, AdamW under a warm-up + cosine schedule,
/// evaluation (validation loss, task accuracy by greedy decoding) and checkpoints.
///
/// Trainer::step() is step.h's run_step with the one-device StepParts; a trainer that spreads the
/// work over several processors supplies its own parts to the same run_step.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "chapters/04_training_baseline/adamw_state.h"
#include "chapters/04_training_baseline/config.h"
#include "chapters/04_training_baseline/data.h"
#include "chapters/04_training_baseline/memory_seams.h"
#include "chapters/04_training_baseline/model.h"
#include "chapters/04_training_baseline/optimizer.h"
#include "chapters/04_training_baseline/precision.h"
#include "chapters/04_training_baseline/step.h"
#include "common/memory.h"
#include "common/rng.h"

namespace book::train {

/// Everything that defines a run; two runs with equal options produce bit-identical losses.
struct TrainOptions {
  Config model;                     ///< the model's shape (vocab and context are set from the task)
  int digits = 3;                   ///< digits per operand of the addition task
  int micro_batch = 32;             ///< sequences per forward/backward
  int accumulation = 1;             ///< micro-batches per optimizer step
  std::int64_t total_steps = 1000;  ///< optimizer steps of the schedule
  std::int64_t warmup_steps = 50;   ///< linear warm-up steps
  float max_lr = 3e-3f;             ///< peak learning rate
  float min_lr = 3e-4f;             ///< learning rate at the end of the cosine
  AdamWConfig adamw;                ///< betas, epsilon, weight decay
  float clip_norm = 1.0f;           ///< global gradient-norm limit
  DType precision = DType::kF32;    ///< storage of weights and gradients: f32, bf16 or f16
  LossScaler::Options scaler;       ///< dynamic loss scaling (used with FP16 only)
  std::uint64_t seed = 1234;        ///< initialisation and data order
  /// The memory seams (memory_seams.h). What the model keeps of its blocks' activations for the
  /// backward (ModelOptions::activation_policy); empty: everything.
  ActivationPolicy<float> activation_policy;
  /// The blocks' attention kernel; null: chapter 4's. Not owned; must outlive the trainer.
  const AttentionKernel<float>* attention = nullptr;
  /// Makes the optimizer that replaces the trainer's AdamW (which then allocates no moments);
  /// empty: AdamW. A run with one cannot save() or load() checkpoints.
  TrainerOptimizerFactory optimizer;
};

/// The stream a Trainer with `options` draws its training micro-batches from, one after another
/// (AdditionTask::batch with Split::kTrain): a run on several devices that must see the same
/// global batches as the one-device run starts its sampler from the same stream.
Rng training_data_stream(const TrainOptions& options);

/// What one optimizer step did.
struct StepResult {
  std::int64_t step = 0;  ///< steps done, this one included
  float loss = 0;         ///< mean training loss over the step's micro-batches
  double grad_norm = 0;   ///< global norm before clipping (0 when skipped)
  float lr = 0;           ///< learning rate used
  bool skipped = false;   ///< FP16 overflow: no update, loss scale halved
  float loss_scale = 1;   ///< loss scale used for this step
};

/// Refuses options no run can train with, by a book::Error that begins with `who`: micro_batch
/// or accumulation below 1, f64 (not a training precision), a clip norm that is not positive and
/// finite, AdamW settings validate() refuses, a schedule learning_rate() refuses (a peak rate
/// above 1, infinite or NaN). Every trainer of the book (chapters 4 to 7) calls it when it is
/// built, so a setting that can only diverge is refused before the first step.
void check_trainable(const TrainOptions& options, const char* who);

/// The start of every trainer's step: the step's number (`steps_done` + 1), its learning rate on
/// the schedule, and its loss scale (`fp16_loss_scale` under FP16, else 1). The trainer counts the
/// step only once it has gone through (or FP16's scaler skipped it), so a refused step is not
/// counted.
StepResult begin_step(const TrainOptions& options, std::int64_t steps_done,
                      float fp16_loss_scale = 1.0f);

/// Stops a run that has diverged: throws book::Error naming the step, the loss and what to change
/// if `loss` is not finite or `gradients_finite` is false, in FP32 and BF16. Under FP16 it never
/// throws: the loss scaler's rule is to skip such a step with a smaller scale. Every trainer
/// calls it before its update, with values all ranks agree on (the all-reduced loss, the global
/// finiteness), so every rank stops at the same step and none waits for the others.
void check_not_diverged(const TrainOptions& options, const StepResult& step,
                        bool gradients_finite = true);

/// Bytes of every buffer a training step holds, measured from the buffers themselves. The
/// Trainer's MemoryTracker sees the same buffers by category: parameters (FP32 weights, or the
/// 16-bit ones), gradients (FP32, or 16-bit), master_weights (mixed precision), optimizer_states
/// (Adam's m and v), activations, and other (the workspace, plus the emulation scratch).
struct MemoryReport {
  std::int64_t parameters = 0;        ///< parameter count
  std::size_t master_weights = 0;     ///< FP32 weights the optimizer updates
  std::size_t adam_moments = 0;       ///< FP32 m and v
  std::size_t low_weights = 0;        ///< 16-bit weights (mixed precision only)
  std::size_t low_grads = 0;          ///< 16-bit gradients (mixed precision only)
  std::size_t fp32_grads = 0;         ///< FP32 gradients (FP32 training only)
  std::size_t emulation_scratch = 0;  ///< FP32 copies the CPU emulation needs (a GPU would not)
  std::size_t activations = 0;        ///< one micro-batch's Activations (activations.h)
  std::size_t workspace = 0;          ///< the model's backward scratch (Model::workspace_bytes)
  /// Bytes per parameter of model state (weights, gradients, optimizer), scratch excluded.
  double state_bytes_per_parameter() const;
};

/// The model half of a checkpoint that Trainer::save wrote: what an inference engine needs
/// (one that serves it), without the optimizer, the data stream or the loss scale.
struct ModelWeights {
  Config config;                  ///< the model's shape
  DType precision = DType::kF32;  ///< the precision the run trained in
  std::int64_t step = 0;          ///< optimizer steps done when it was saved
  /// Every parameter in ParameterLayout(config)'s order, FP32 (the master weights of a
  /// mixed-precision run): copy them into a whole Model<float>'s params().
  std::vector<float> weights;
};

/// Reads the model half of a checkpoint written by Trainer::save. Throws book::Error if the file
/// is missing, corrupted, of another format version, or its weights do not fit its config.
ModelWeights read_model_weights(const std::string& path);

/// One training run. Every buffer it uses is allocated when it is built and reported to its
/// MemoryTracker, in this order: the model's parameters, gradients and workspace; one
/// micro-batch's activations; in mixed precision the FP32 master weights; Adam's m and v; in
/// mixed precision the 16-bit weights and gradients. A step allocates nothing, so the tracker's
/// peak is what is live after construction (an attention kernel or optimizer from the options
/// may hold scratch during a step: then the peak is during the step).
class Trainer : private StepParts {
 public:
  /// A fresh run: model initialised from options.seed, data stream seeded from it. Allocations
  /// report to `tracker` (not owned; must outlive the trainer), or to the trainer's own. Throws
  /// book::Error for options that cannot train: a bad model shape, batch or precision, a clip
  /// norm that is not positive and finite, a schedule learning_rate() refuses, AdamW settings
  /// validate() refuses.
  explicit Trainer(const TrainOptions& options, MemoryTracker* tracker = nullptr);

  /// One optimizer step over options.accumulation micro-batches. Throws book::Error naming the
  /// step, before any update, if the loss or the gradient norm is not finite: the run has
  /// diverged (check_not_diverged(); under FP16 the loss scaler skips the step instead).
  StepResult step();
  /// Mean loss over `batches` validation batches drawn with their own seed (the training data
  /// stream is untouched).
  float validation_loss(int batches, std::uint64_t seed = 99);
  /// Fraction of `examples` problems of `split` whose whole sum greedy decoding gets right.
  double accuracy(int examples, Split split, std::uint64_t seed = 7);
  /// Greedy decoding of a + b: the model's answer (-1 if it emits a non-digit).
  std::int64_t answer(std::int64_t a, std::int64_t b);

  /// Writes a checkpoint (model, optimizer, data stream, loss scale, step) atomically.
  void save(const std::string& path) const;
  /// Restores a checkpoint written by save() from a run with the same options' model config.
  /// All or nothing: the whole file is read and checked first (the model config and precision,
  /// the counts, finite weights and moments, a usable data-stream state, a loss scale within the
  /// scaler's options), and the trainer changes only if all of it passes. Throws book::Error
  /// saying what was wrong otherwise, with the trainer untouched.
  void load(const std::string& path);

  std::int64_t steps_done() const { return step_; }  ///< optimizer steps so far
  std::int64_t tokens_per_step() const;              ///< model positions per step
  /// Bytes of every buffer, activations sized for one training micro-batch.
  MemoryReport memory() const;
  /// The tracker the trainer's buffers report to.
  const MemoryTracker& memory_tracker() const { return *tracker_; }
  Model<float>& model() { return model_; }                  ///< the model
  Activations<float>& activations() { return acts_; }       ///< the micro-batch activations
  const AdditionTask& task() const { return task_; }        ///< the data
  const TrainOptions& options() const { return options_; }  ///< the options
  const LossScaler& scaler() const { return scaler_; }      ///< loss scaling state

 private:
  bool mixed() const { return options_.precision != DType::kF32; }
  std::span<float> master() {
    if (mixed() && optimizer_ && !optimizer_->master_weights().empty())
      return optimizer_->master_weights();  // held by the optimizer (memory_seams.h)
    return mixed() ? master_.span() : model_.params().span();
  }
  void refresh_low_weights();
  // The one-device parts of run_step (step.h).
  void zero_gradients() override;
  Batch next_batch() override;
  double micro_batch(const Batch& batch, float loss_scale, bool last) override;
  float mean_loss(double loss_sum, int micro_batches) override;
  bool unscale_gradients(float loss_scale) override;
  double clip_and_update(float lr) override;

  TrainOptions options_;
  AdditionTask task_;
  MemoryTracker own_tracker_;
  MemoryTracker* tracker_;
  Model<float> model_;
  Activations<float> acts_;
  std::unique_ptr<TrainerOptimizer> optimizer_;  // TrainOptions::optimizer's (null: adam_)
  TrackedBuffer<float> master_;
  AdamWState adam_;
  TrackedBuffer<std::uint16_t> low_weights_, low_grads_;
  LossScaler scaler_;
  Rng data_rng_;
  std::int64_t step_ = 0;
  double squares_ = 0;  // the step's sum of squared gradients, from unscale to clip
};

}  // namespace book::train
