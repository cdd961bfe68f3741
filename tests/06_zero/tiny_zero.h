// The small runs this chapter's tests train (chapter 5's tiny model): 2 layers, d_model 16,
// 2-digit addition, a global micro-batch of 12 (1, 2, 3, 4 ranks divide it), 2 micro-batches per
// step, buckets of 2048 bytes (several buckets, some cut inside no tensor, sizes N rarely divides).
#pragma once

#include <vector>

#include "chapters/03_collectives/threads.h"
#include "chapters/04_training_baseline/trainer.h"
#include "chapters/05_data_parallel/ddp_options.h"
#include "chapters/05_data_parallel/ddp_trainer.h"
#include "chapters/06_zero/zero_options.h"

namespace book::zero::testing {

/// Chapter 5's tiny run, with `precision`.
inline train::TrainOptions tiny_train_options(DType precision = DType::kF32) {
  train::TrainOptions o;
  o.model.n_layer = 2;
  o.model.n_head = 2;
  o.model.d_model = 16;
  o.digits = 2;
  o.micro_batch = 12;
  o.accumulation = 2;
  o.total_steps = 40;
  o.warmup_steps = 2;
  o.max_lr = 1e-2f;
  o.min_lr = 1e-3f;
  o.seed = 2024;
  o.precision = precision;
  return o;
}

inline constexpr std::size_t kTinyBucketBytes = 2048;  ///< a few buckets for the tiny model

/// A ZeRO run of `train` at `stage`.
inline ZeroOptions tiny_zero_options(Stage stage,
                                     train::TrainOptions train = tiny_train_options()) {
  ZeroOptions o;
  o.train = train;
  o.stage = stage;
  o.bucket_bytes = kTinyBucketBytes;
  return o;
}

/// Chapter 5's DDP run of the same: rung 4 (buckets overlapped with the last backward of the
/// step, PyTorch's no_sync), same buckets: one reduction per step, as ZeRO's.
inline ddp::DdpOptions tiny_ddp_options(train::TrainOptions train = tiny_train_options()) {
  ddp::DdpOptions o;
  o.train = train;
  o.rung = ddp::Rung::kNoSync;
  o.bucket_bytes = kTinyBucketBytes;
  return o;
}

/// What a DDP run of chapter 5 leaves to compare a ZeRO run with: rank 0's loss per step and the
/// master weights after the last step.
struct DdpRun {
  std::vector<float> losses, weights;
};

/// `steps` steps of chapter 5's DDP with `options` on `n` thread ranks.
inline DdpRun ddp_run(int n, const ddp::DdpOptions& options, int steps) {
  DdpRun run;
  coll::run_ranks(n, [&](coll::Communicator& comm) {
    ddp::DdpTrainer trainer(comm, options);
    for (int s = 0; s < steps; ++s) {
      const float loss = trainer.step().loss;
      if (comm.rank() == 0) run.losses.push_back(loss);
    }
    const auto w = trainer.master_weights();
    if (comm.rank() == 0) run.weights.assign(w.begin(), w.end());
  });
  return run;
}

}  // namespace book::zero::testing
