#include "chapters/04_training_baseline/step.h"

#include <utility>

#include "chapters/04_training_baseline/clipping.h"
#include "chapters/04_training_baseline/mixed_precision.h"
#include "chapters/04_training_baseline/trainer.h"
#include "common/check.h"

namespace book::train {

//! [forward_backward]
template <typename T>
T forward_backward(Model<T>& model, const Batch& batch, T loss_scale, Activations<T>& acts,
                   const GradientReadyHook& ready) {
  BOOK_CHECK(batch.tokens.size() == static_cast<std::size_t>(batch.batch) * batch.seq_len &&
                 batch.targets.size() == batch.tokens.size(),
             "forward_backward: a batch of " << batch.batch << " × " << batch.seq_len << " has "
                                             << batch.tokens.size() << " tokens and "
                                             << batch.targets.size() << " targets");
  const T loss =
      model.forward(acts, batch.tokens.data(), batch.targets.data(), batch.batch, batch.seq_len);
  model.backward(acts, loss_scale, ready);
  return loss;
}
//! [forward_backward]

//! [run_step]
StepResult run_step(const TrainOptions& options, std::int64_t steps_done, LossScaler& scaler,
                    StepParts& parts) {
  StepResult result = begin_step(options, steps_done, scaler.scale());
  parts.zero_gradients();
  // Each micro-batch's loss is a mean, so dividing by the count makes the sum a mean too.
  const float micro_scale = result.loss_scale / static_cast<float>(options.accumulation);
  double loss_sum = 0;
  for (int micro = 0; micro < options.accumulation; ++micro) {
    const bool last = micro == options.accumulation - 1;
    const Batch batch = parts.next_batch();
    loss_sum += parts.micro_batch(batch, micro_scale, last);
    parts.synchronize_gradients(last);
  }
  result.loss = parts.mean_loss(loss_sum, options.accumulation);
  // Without a loss scaler (FP32, BF16) a loss or gradient that is not finite means the run has
  // diverged: stop here, before the update, rather than train on NaN for the rest of the schedule.
  check_not_diverged(options, result);
  const bool finite = parts.unscale_gradients(result.loss_scale);
  check_not_diverged(options, result, finite);
  if (options.precision == DType::kF16 && !scaler.update(!finite)) {
    result.skipped = true;  // FP16 overflow: no update, with a smaller scale next time
    return result;
  }
  result.grad_norm = parts.clip_and_update(result.lr);
  return result;
}
//! [run_step]

//! [mixed_precision_step]
double unscaled_sum_of_squares(DType precision, std::span<float> grads,
                               std::span<std::uint16_t> bits, float loss_scale) {
  if (precision != DType::kF32) {  // the gradients as 16-bit storage holds them, then unscaled
    encode(precision, grads, bits);
    decode(precision, bits, grads);
    unscale(grads, loss_scale);
  }
  return sum_of_squares(grads);  // not finite exactly when a gradient is not
}
//! [mixed_precision_step]

StepSpan::StepSpan(Trace* trace, int track, std::string lane, std::string name,
                   std::string category, double* seconds)
    : span_(trace, track, std::move(lane), std::move(name), std::move(category)),
      seconds_(seconds) {}

StepSpan::~StepSpan() {
  if (seconds_ != nullptr) *seconds_ += timer_.seconds();
}

template float forward_backward<float>(Model<float>&, const Batch&, float, Activations<float>&,
                                       const GradientReadyHook&);
template double forward_backward<double>(Model<double>&, const Batch&, double, Activations<double>&,
                                         const GradientReadyHook&);

}  // namespace book::train
