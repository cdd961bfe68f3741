// For the later chapters' tests that their trainers refuse the TrainOptions seams they do not
// implement (chapters/04_training_baseline/unsupported_seams.h): `options` with one seam set.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "chapters/04_training_baseline/trainer.h"

namespace book::train::testing {

/// An attention kernel that is never run (the refusal comes first).
class UnusedKernel final : public AttentionKernel<float> {
 public:
  std::size_t saved_elements(int, int, int) const override { return 0; }
  void forward(const float*, int, int, int, int, float*, float*) const override {}
  void backward(const float*, const float*, const float*, const float*, int, int, int, int,
                float*) const override {}
};

/// The seams, by the name the refusal gives them.
inline const char* kSeams[] = {"TrainOptions::optimizer", "TrainOptions::activation_policy",
                               "TrainOptions::attention"};

/// `options` with seam `which` (an index into kSeams) set to something that is never called.
inline TrainOptions with_seam(TrainOptions options, int which) {
  static const UnusedKernel kernel;
  if (which == 0)
    options.optimizer = [](const ParameterLayout&, MemoryTracker*) {
      return std::unique_ptr<TrainerOptimizer>();
    };
  if (which == 1)
    options.activation_policy = [](const Model<float>&) {
      return std::unique_ptr<BlockMemory<float>>();
    };
  if (which == 2) options.attention = &kernel;
  return options;
}

}  // namespace book::train::testing
