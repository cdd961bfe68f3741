// The stage's tensor-parallel runs: chapter 4's one-device trainer, then the same run on t thread
// ranks, with one micro-batch taken through the pieces first to count its traffic.
#include <algorithm>
#include <cmath>
#include <vector>

#include "chapters/03_collectives/threads.h"
#include "chapters/07_tensor_parallel/accounting.h"
#include "chapters/07_tensor_parallel/parallel_trainer.h"
#include "chapters/07_tensor_parallel/tp_stage.h"
#include "common/timer.h"

namespace book::tp {
namespace {

double median_after_first(std::vector<double> seconds) {
  if (seconds.size() > 1) seconds.erase(seconds.begin());  // the first step warms the caches
  return median(std::move(seconds)) * 1e3;
}

}  // namespace

OneDeviceRun run_one_device(const train::TrainOptions& options, int steps) {
  OneDeviceRun run;
  train::Trainer trainer(options);
  std::vector<double> seconds;
  for (int i = 0; i < steps; ++i) {
    Timer timer;
    run.losses.push_back(trainer.step().loss);
    seconds.push_back(timer.seconds());
  }
  run.step_ms = median_after_first(seconds);
  return run;
}

//! [measure_traffic]
TensorParallelRow run_tensor_parallel(const train::TrainOptions& options, int t,
                                      SequenceParallel sp, int steps, const OneDeviceRun& one) {
  TensorParallelRow row;
  row.t = t;
  row.sequence_parallel = sp;
  const train::Config& config = options.model;
  const int b = options.micro_batch, s = config.context, layers = config.n_layer;
  coll::run_ranks(t, [&](coll::Communicator& comm) {
    TensorParallelTrainer trainer(options, comm, sp);
    train::Model<float>& model = trainer.model();
    train::Activations<float>& acts = trainer.activations();
    TensorParallelGroup<float>& group = trainer.group();
    // One micro-batch through the pieces, counting layer 0's collectives and every byte sent.
    Rng rng(7);
    const train::Batch batch =
        train::AdditionTask(options.digits).batch(rng, train::Split::kTrain, b);
    comm.reset_counters();
    group.reset_counts();
    model.zero_grad();
    model.embed_forward(acts, batch.tokens.data(), b, s);
    const CollectiveCounts before_forward = group.counts();
    const std::uint64_t sent_before_forward = comm.counters().bytes_sent;
    model.layers_forward(acts, 0, 1);
    const CollectiveCounts forward = group.counts().since(before_forward);
    const std::uint64_t sent_forward = comm.counters().bytes_sent - sent_before_forward;
    model.layers_forward(acts, 1, layers);
    model.head_forward(acts, batch.targets.data());
    model.head_backward(acts, 1.0f);
    model.layers_backward(acts, layers, 1);
    const CollectiveCounts before_backward = group.counts();
    const std::uint64_t sent_before_backward = comm.counters().bytes_sent;
    model.layers_backward(acts, 1, 0);
    const CollectiveCounts backward = group.counts().since(before_backward);
    const std::uint64_t sent_backward = comm.counters().bytes_sent - sent_before_backward;
    model.embed_backward(acts);
    model.finish_gradients();
    const std::uint64_t sent_step = comm.counters().bytes_sent;
    //! [measure_traffic]
    std::vector<double> seconds;
    std::vector<float> losses;
    for (int i = 0; i < steps; ++i) {
      Timer timer;
      losses.push_back(trainer.step().loss);
      seconds.push_back(timer.seconds());
    }
    if (comm.rank() != 0) return;
    row.parameter_bytes = model.params().bytes();
    row.parameter_formula = parameter_elements(config, model.part()) * sizeof(float);
    row.layer_activation_bytes = acts.layer_bytes(0);
    row.layer_activation_formula = layer_activation_bytes(config, b, s, t, sp, sizeof(float));
    row.megatron_layer_bytes =
        megatron_layer_activation_bytes(s, b, config.d_model, config.n_head, t, sp);
    row.layer_forward = forward;
    row.layer_backward = backward;
    const std::uint64_t n = static_cast<std::uint64_t>(b) * s;
    auto layer = layer_forward_collectives(n, config.d_model, sp);
    const auto back = layer_backward_collectives(n, config.d_model, sp);
    layer.insert(layer.end(), back.begin(), back.end());
    row.layer_bytes_sent = sent_forward + sent_backward;
    row.layer_bytes_formula = ring_elements_sent(layer, t, 0) * sizeof(float);
    row.step_bytes_sent = sent_step;
    row.step_bytes_formula =
        ring_elements_sent(step_collectives(config, b, s, t, sp), t, 0) * sizeof(float);
    row.step_ms = median_after_first(seconds);
    for (int i = 0; i < steps && i < static_cast<int>(one.losses.size()); ++i)
      row.max_loss_deviation = std::max(
          row.max_loss_deviation, std::fabs(double(losses[i]) - one.losses[i]) / one.losses[i]);
  });
  return row;
}

}  // namespace book::tp
