// The small runs this chapter's tests train: a model small enough to train a few steps in
// milliseconds, with a global micro-batch every world size 1..4 divides, and accumulation.
#pragma once

#include <vector>

#include "chapters/04_training_baseline/trainer.h"
#include "chapters/05_data_parallel/ddp_options.h"

namespace book::ddp::testing {

/// 2 layers, d_model 16, 2 heads, 2-digit addition; 12 sequences per global micro-batch (1, 2,
/// 3, 4 and 6 ranks divide it), `accumulation` micro-batches per step, a short schedule.
inline train::TrainOptions tiny_train_options(int accumulation = 2) {
  train::TrainOptions o;
  o.model.n_layer = 2;
  o.model.n_head = 2;
  o.model.d_model = 16;
  o.digits = 2;
  o.micro_batch = 12;
  o.accumulation = accumulation;
  o.total_steps = 40;
  o.warmup_steps = 2;
  o.max_lr = 1e-2f;
  o.min_lr = 1e-3f;
  o.seed = 2024;
  return o;
}

/// A data-parallel run of `train` on rung `rung` with buckets of `bucket_bytes`.
inline DdpOptions tiny_ddp_options(Rung rung, train::TrainOptions train = tiny_train_options(),
                                   std::size_t bucket_bytes = 2048) {
  DdpOptions o;
  o.train = train;
  o.rung = rung;
  o.bucket_bytes = bucket_bytes;
  return o;
}

/// Chapter 4's one-device losses for `steps` steps of `train`, and its final weights.
struct OneDeviceRun {
  std::vector<float> losses;   ///< per step
  std::vector<float> weights;  ///< the FP32 (master) weights after the last step
};

/// Runs chapter 4's Trainer.
inline OneDeviceRun one_device_run(const train::TrainOptions& train, int steps) {
  train::Trainer trainer(train);
  OneDeviceRun run;
  for (int s = 0; s < steps; ++s) run.losses.push_back(trainer.step().loss);
  const auto& p = trainer.model().params();
  run.weights.assign(p.begin(), p.end());
  return run;
}

}  // namespace book::ddp::testing
