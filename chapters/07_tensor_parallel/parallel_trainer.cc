#include "chapters/07_tensor_parallel/parallel_trainer.h"

#include <cmath>
#include <span>

#include "chapters/04_training_baseline/clipping.h"
#include "chapters/04_training_baseline/optimizer.h"
#include "common/check.h"

namespace book::tp {
namespace {

ParallelModelOptions<float> model_options(coll::Communicator& comm,
                                          TensorParallelGroup<float>& group, SequenceParallel sp,
                                          MemoryTracker* tracker) {
  ParallelModelOptions<float> o;
  o.part = train::ModelPart(0, -1, {comm.rank(), comm.size()});
  o.sequence_parallel = sp;
  o.comm = &group;
  o.tracker = tracker;
  return o;
}

}  // namespace

train::TrainOptions with_task_shape(train::TrainOptions options) {
  const train::AdditionTask task(options.digits);
  options.model.vocab_size = train::AdditionTask::vocab_size();
  options.model.context = task.model_context();
  options.model.validate();
  BOOK_CHECK(options.precision == DType::kF32,
             "ParallelTrainer: trains in f32 only, got " << dtype_name(options.precision));
  train::check_trainable(options, "ParallelTrainer");
  return options;
}

ParallelTrainer::ParallelTrainer(const train::TrainOptions& options, coll::Communicator& comm,
                                 SequenceParallel sequence_parallel, MemoryTracker* tracker)
    : options_(with_task_shape(options)),
      task_(options_.digits),
      comm_(comm),
      group_(comm),
      model_(options_.model, options_.micro_batch,
             model_options(comm, group_, sequence_parallel, tracker)),
      acts_(model_),
      adam_(0, model_.layout().total(), tracker),
      data_rng_(train::training_data_stream(options_)) {
  model_.init(options_.seed);
}

//! [parallel_step]
train::StepResult ParallelTrainer::step() {
  train::StepResult result = train::begin_step(options_, step_);
  model_.zero_grad();
  double loss_sum = 0;
  for (int micro = 0; micro < options_.accumulation; ++micro) {
    const train::Batch batch = task_.batch(data_rng_, train::Split::kTrain, options_.micro_batch);
    loss_sum +=
        forward_backward(model_, batch, 1.0f / static_cast<float>(options_.accumulation), acts_);
  }
  model_.finish_gradients();  // sequence parallelism: the token-sharded gradients, summed
  result.loss = static_cast<float>(loss_sum / options_.accumulation);
  train::check_not_diverged(options_, result);  // the same loss on every rank
  // The global norm: every rank's shards, each replicated tensor once.
  double squares = model_.gradient_sum_of_squares();
  comm_.all_reduce(std::span<double>(&squares, 1));
  result.grad_norm = std::sqrt(squares);
  train::check_not_diverged(options_, result, std::isfinite(squares));
  std::span<float> grads = model_.grads().span();
  train::scale_gradients(grads, train::clip_coefficient(squares, options_.clip_norm));
  train::adamw_update(model_.layout(), adam_, model_.params().span(), grads, result.lr,
                      options_.adamw);
  step_ = result.step;
  return result;
}
//! [parallel_step]

}  // namespace book::tp
