// Helpers of the model tests: chapter 4's one-device run on random parameters, and a
// tensor-parallel rank of the same model (chapter 4's Model with this chapter's seam).
#pragma once

#include <string>
#include <vector>

#include "chapters/04_training_baseline/model.h"
#include "chapters/04_training_baseline/step.h"
#include "chapters/07_tensor_parallel/tensor_parallel_seam.h"
#include "tests/07_tensor_parallel/tp_testing.h"

namespace book::tp::testing {

/// Loss and gradient tolerance of the model tests (relative, double precision).
inline constexpr double kModelTolerance = 1e-11;

/// Chapter 4's one-device model on a batch: its layout, random parameters, gradients and loss.
struct WholeRun {
  train::ParameterLayout layout;  ///< the whole model's
  std::vector<double> params;     ///< random (random_parameters)
  std::vector<double> grads;      ///< after one forward_backward
  double loss = 0;                ///< its loss
};

/// Chapter 4's one-device model on `batch`, from random_parameters(seed).
inline WholeRun whole_run(const train::Config& config, const train::Batch& batch,
                          std::uint64_t seed) {
  train::Model<double> whole(config, batch.batch);
  WholeRun run{whole.layout(), random_parameters(whole.layout(), seed), {}, 0};
  std::copy(run.params.begin(), run.params.end(), whole.params().begin());
  whole.zero_grad();
  run.loss = train::forward_backward(whole, batch, 1.0);
  run.grads.assign(whole.grads().begin(), whole.grads().end());
  return run;
}

/// One tensor-parallel rank: chapter 4's Model of `part` (its vocabulary split) with its seam
/// over `comm` (null: a group of one), allocations reported to `tracker`.
struct TensorParallelRank {
  /// The rank's seam and model.
  TensorParallelRank(const train::Config& config, int max_batch, train::ModelPart part = {},
                     SequenceParallel sp = SequenceParallel::kOff,
                     TensorParallelComm<double>* comm = nullptr, MemoryTracker* tracker = nullptr)
      : seam(config, max_batch, comm, sp, tracker),
        model(config, max_batch, tensor_parallel_options(part, seam, tracker)) {}
  TensorParallelSeam<double> seam;  ///< what the model's passes do on this rank
  train::Model<double> model;       ///< chapter 4's model, this rank's shard
};

/// "t = 2, sequence parallelism on", for traces.
inline std::string label(int t, SequenceParallel sp) {
  return "t = " + std::to_string(t) + ", sequence parallelism " + sequence_parallel_name(sp);
}

}  // namespace book::tp::testing
