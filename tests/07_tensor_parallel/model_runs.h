// Helpers of the model tests: chapter 4's one-device run on random parameters, and the options
// of a ParallelModel.
#pragma once

#include <string>
#include <vector>

#include "chapters/04_training_baseline/model.h"
#include "chapters/04_training_baseline/step.h"
#include "chapters/07_tensor_parallel/parallel_model.h"
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

/// A ParallelModel's options.
inline ParallelModelOptions<double> options(train::ModelPart part, SequenceParallel sp,
                                            train::TensorParallelComm<double>* comm,
                                            MemoryTracker* tracker = nullptr) {
  ParallelModelOptions<double> o;
  o.part = part;
  o.sequence_parallel = sp;
  o.comm = comm;
  o.tracker = tracker;
  return o;
}

/// "t = 2, sequence parallelism on", for traces.
inline std::string label(int t, SequenceParallel sp) {
  return "t = " + std::to_string(t) + ", sequence parallelism " + sequence_parallel_name(sp);
}

}  // namespace book::tp::testing
