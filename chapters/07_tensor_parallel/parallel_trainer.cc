#include "chapters/07_tensor_parallel/parallel_trainer.h"

#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

#include "chapters/03_collectives/agreement.h"
#include "chapters/04_training_baseline/checkpoint.h"
#include "chapters/04_training_baseline/clipping.h"
#include "chapters/04_training_baseline/optimizer.h"
#include "chapters/04_training_baseline/step.h"
#include "chapters/04_training_baseline/unsupported_seams.h"
#include "common/check.h"
#include "common/enum_check.h"

namespace book::tp {
namespace {

// FNV-1a of every option the ranks must agree on (chapter 5's DDP fingerprint, for a run with no
// rung or buckets, plus sequence parallelism). Ranks with another seed or learning rate would
// train different shards of no one model, without any error.
std::uint64_t fingerprint(const train::TrainOptions& t, SequenceParallel sp) {
  std::vector<std::uint8_t> bytes;
  auto put = [&](const auto& value) {
    const auto* p = reinterpret_cast<const std::uint8_t*>(&value);
    bytes.insert(bytes.end(), p, p + sizeof(value));
  };
  const train::Config& c = t.model;
  for (int field :
       {c.vocab_size, c.context, c.n_layer, c.n_head, c.d_model, t.digits, t.micro_batch,
        t.accumulation, static_cast<int>(t.precision), static_cast<int>(sp)})
    put(field);
  for (float field : {t.max_lr, t.min_lr, t.adamw.beta1, t.adamw.beta2, t.adamw.epsilon,
                      t.adamw.weight_decay, t.clip_norm})
    put(field);
  for (std::int64_t field : {t.total_steps, t.warmup_steps}) put(field);
  put(t.seed);
  return train::fnv1a64(bytes);
}

// with_task_shape(options), then one all-gather of every rank's fingerprint: every rank throws
// the same error, naming the ranks that differ from rank 0, before anything is allocated.
train::TrainOptions checked_options(const train::TrainOptions& options, coll::Communicator& comm,
                                    SequenceParallel sp) {
  // SequenceParallel(7) used to crash in finish_gradients.
  check_enum(sp, SequenceParallel::kOff, SequenceParallel::kOn, "tp::SequenceParallel",
             "TensorParallelTrainer");
  train::refuse_unsupported_seams(options, "TensorParallelTrainer");
  train::TrainOptions resolved = with_task_shape(options);
  coll::require_same_on_every_rank(comm, fingerprint(resolved, sp), "TensorParallelTrainer",
                                   "options",
                                   "start every rank with the same model, task, batch, schedule, "
                                   "optimizer, seed and sequence parallelism");
  return resolved;
}

}  // namespace

train::TrainOptions with_task_shape(train::TrainOptions options) {
  const train::AdditionTask task(options.digits);
  options.model.vocab_size = train::AdditionTask::vocab_size();
  options.model.context = task.model_context();
  options.model.validate();
  BOOK_CHECK(options.precision == DType::kF32,
             "TensorParallelTrainer: trains in f32 only, got " << dtype_name(options.precision));
  train::check_trainable(options, "TensorParallelTrainer");
  return options;
}

TensorParallelTrainer::TensorParallelTrainer(const train::TrainOptions& options,
                                             coll::Communicator& comm,
                                             SequenceParallel sequence_parallel,
                                             MemoryTracker* tracker)
    : options_(checked_options(options, comm, sequence_parallel)),
      task_(options_.digits),
      comm_(comm),
      group_(comm),
      seam_(options_.model, options_.micro_batch, &group_, sequence_parallel, tracker),
      model_(options_.model, options_.micro_batch,
             tensor_parallel_options(train::ModelPart(0, -1, {comm.rank(), comm.size()}), seam_,
                                     tracker)),
      acts_(model_),
      adam_(0, model_.layout().total(), tracker),
      data_rng_(train::training_data_stream(options_)),
      scaler_(options_.scaler) {
  model_.init(options_.seed);
}

train::StepResult TensorParallelTrainer::step() {
  const train::StepResult result = train::run_step(options_, step_, scaler_, *this);
  step_ = result.step;
  return result;
}

//! [parallel_step]
// The tensor-parallel parts of run_step (chapter 4's step.h): every rank draws the same
// micro-batches, runs them through its shard, and the global norm sums each rank's shards.
void TensorParallelTrainer::zero_gradients() { model_.zero_grad(); }

train::Batch TensorParallelTrainer::next_batch() {
  return task_.batch(data_rng_, train::Split::kTrain, options_.micro_batch);
}

double TensorParallelTrainer::micro_batch(const train::Batch& batch, float loss_scale,
                                          bool /*last*/) {
  return train::forward_backward(model_, batch, loss_scale, acts_);
}

void TensorParallelTrainer::synchronize_gradients(bool last) {
  if (last) model_.finish_gradients();  // sequence parallelism: the token-sharded gradients
}

float TensorParallelTrainer::mean_loss(double loss_sum, int micro_batches) {
  return static_cast<float>(loss_sum / micro_batches);  // the same loss on every rank
}

bool TensorParallelTrainer::unscale_gradients(float /*loss_scale: FP32 only, always 1*/) {
  // The global norm's sum of squares: every rank's shards, each replicated tensor once.
  squares_ = model_.gradient_sum_of_squares();
  comm_.all_reduce(std::span<double>(&squares_, 1));
  return std::isfinite(squares_);
}

double TensorParallelTrainer::clip_and_update(float lr) {
  std::span<float> grads = model_.grads().span();
  train::scale_gradients(grads, train::clip_coefficient(squares_, options_.clip_norm));
  train::adamw_update(model_.layout(), adam_, model_.params().span(), grads, lr, options_.adamw);
  return std::sqrt(squares_);
}
//! [parallel_step]

}  // namespace book::tp
