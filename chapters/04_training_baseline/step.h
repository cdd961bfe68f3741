/// @file
/// The training step: one fixed order of its pieces (run_step), the parts a way of training
/// supplies (StepParts), and the one scope that times and traces a part (StepSpan).
///
/// Every trainer's step is the same sequence; only what happens inside a piece differs:
/// 1. begin_step (trainer.h): the step's number, learning rate and loss scale; zero the gradients;
/// 2. for each micro-batch: draw it, forward_backward() (gradients accumulate; a
///    GradientReadyHook fires as each layer's gradients are final, so a trainer can start sending
///    them while backward goes on), then the trainer's gradient synchronisation, if any;
/// 3. the step's loss, and check_not_diverged on it;
/// 4. mixed precision (mixed_precision.h): gradients through 16 bits, unscale, check finite
///    (check_not_diverged; under FP16 the LossScaler skips a step that overflowed);
/// 5. clipping (clipping.h: the global norm's sum_of_squares, one clip_coefficient) and the
///    optimizer (adamw_state.h's adamw_update over a range of the flat buffer).
/// run_step() is that order, written once; Trainer::step() is run_step with the one-device parts.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "chapters/04_training_baseline/data.h"
#include "chapters/04_training_baseline/model.h"
#include "chapters/04_training_baseline/precision.h"
#include "common/timer.h"
#include "common/trace.h"

namespace book::train {

struct TrainOptions;  // trainer.h: a run's options
struct StepResult;    // trainer.h: what one optimizer step did

/// Forward and backward of one micro-batch through a model that holds every layer (a whole
/// model, or a tensor-parallel rank of one): returns the batch's mean loss, and adds
/// dLoss/dθ · loss_scale into model.grads() (call model.zero_grad() before the first
/// micro-batch of a step), calling `ready` as each layer's gradients are complete. `acts` holds
/// this micro-batch's activations (one per micro-batch in flight).
template <typename T>
T forward_backward(Model<T>& model, const Batch& batch, T loss_scale, Activations<T>& acts,
                   const GradientReadyHook& ready = {});

/// The same on the model's own Activations.
template <typename T>
T forward_backward(Model<T>& model, const Batch& batch, T loss_scale,
                   const GradientReadyHook& ready = {}) {
  return forward_backward(model, batch, loss_scale, model.activations(), ready);
}

/// What a trainer supplies to run_step(): the pieces of a step that differ from one way of
/// training to another (where the gradients live, how they are combined, which elements the
/// optimizer updates). run_step() calls them in its fixed order; a trainer implements each as
/// the plain algorithm and leaves the order, the divergence checks and the loss scaler to it.
class StepParts {
 public:
  virtual ~StepParts() = default;

  /// Clears the gradients the step's micro-batches accumulate into (called once, first).
  virtual void zero_gradients() = 0;
  /// The next training micro-batch, as this trainer runs it (all of it, or its share).
  virtual Batch next_batch() = 0;
  /// Forward and backward of `batch`: returns its mean loss and adds dLoss/dθ · `loss_scale`
  /// into the gradients. `last`: this is the step's last micro-batch (a trainer that combines
  /// gradients only once per step starts that from the gradient-ready hook of this backward).
  virtual double micro_batch(const Batch& batch, float loss_scale, bool last) = 0;
  /// After each micro-batch: the gradient synchronisation, or what of it the backward pass did
  /// not finish. `last` as for micro_batch(). The one-device trainer has nothing to do.
  virtual void synchronize_gradients(bool last) { (void)last; }
  /// The step's loss from the sum of its `micro_batches` micro-batches' losses: the mean over
  /// every sequence of the step, the same value wherever it is computed (run_step stops the run
  /// on it if it is not finite).
  virtual float mean_loss(double loss_sum, int micro_batches) = 0;
  /// The gradients the optimizer will read, in FP32 and divided by `loss_scale` (mixed
  /// precision: through 16 bits first). Returns whether all of them are finite, the same answer
  /// wherever it is asked. A trainer may compute its gradient norm here and keep it for
  /// clip_and_update().
  virtual bool unscale_gradients(float loss_scale) = 0;
  /// Clips the gradients by the global norm (TrainOptions::clip_norm) and steps the optimizer
  /// with learning rate `lr`, leaving the weights the next forward pass reads up to date.
  /// Returns the global norm before clipping. Not called for a step the loss scaler skips.
  virtual double clip_and_update(float lr) = 0;
};

/// StepParts::unscale_gradients for a trainer that holds every gradient: under `precision` bf16
/// or f16 the gradients go through 16-bit storage (`bits`, one per gradient: FP16 overflows past
/// 65504 and flushes below 2^-24, BF16 keeps FP32's range with fewer digits) and are divided by
/// `loss_scale`; under f32 they stay as they are. Returns their sum of squares (FP64, element
/// order), the norm's square for clipping, which is finite exactly when every gradient is.
double unscaled_sum_of_squares(DType precision, std::span<float> grads,
                               std::span<std::uint16_t> bits, float loss_scale);

/// One optimizer step, in the one order every trainer shares: begin_step with `steps_done` and
/// the scaler's scale, parts.zero_gradients(), then options.accumulation times next_batch(),
/// micro_batch() (loss scale / accumulation, so the summed gradient is the mean's) and
/// synchronize_gradients(); mean_loss() and check_not_diverged on it; unscale_gradients() and
/// check_not_diverged on its answer; under FP16, `scaler`.update (a step that overflowed is
/// skipped: result.skipped, no update); clip_and_update(). The caller counts the step (it did
/// not throw). Throws book::Error, before any update, when the run has diverged.
StepResult run_step(const TrainOptions& options, std::int64_t steps_done, LossScaler& scaler,
                    StepParts& parts);

/// One piece of a step, timed and traced by one scope: from construction to destruction it adds
/// its wall time to `*seconds` (when `seconds` is not null) and records a box on lane `lane` of
/// `trace`'s track `track` (when `trace` is not null), so a trainer's code says once what a piece
/// is called and where its time goes.
class StepSpan {
 public:
  /// Starts the clock and the box `name` of kind `category`.
  StepSpan(Trace* trace, int track, std::string lane, std::string name, std::string category,
           double* seconds = nullptr);
  /// Adds the elapsed time to `*seconds`; the box ends.
  ~StepSpan();
  StepSpan(const StepSpan&) = delete;             ///< A span is one scope of one thread.
  StepSpan& operator=(const StepSpan&) = delete;  ///< A span is one scope of one thread.

 private:
  Trace::Span span_;
  Timer timer_;
  double* seconds_;
};

}  // namespace book::train
