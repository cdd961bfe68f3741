// //chapters/04_training_baseline:train_reference, the library later chapters train with, must
// hold the reference exercise bodies on both tracks: this test passes with --config=exercises too.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "chapters/04_training_baseline/trainer.h"

namespace book::train {
namespace {

TEST(TrainReference, TrainsOnBothTracks) {
  TrainOptions options;
  options.digits = 2;
  options.model.d_model = 16;
  options.model.n_head = 2;
  options.micro_batch = 4;
  options.precision = DType::kF16;  // all four exercises: both backwards, AdamW, the scaler
  Trainer trainer(options);
  const std::vector<float> before(trainer.model().params().begin(), trainer.model().params().end());
  StepResult result;
  for (int i = 0; i < 3; ++i) result = trainer.step();
  EXPECT_TRUE(std::isfinite(result.loss));
  EXPECT_NE(before[0], trainer.model().params()[0])
      << "three steps left the first weight unchanged";
}

}  // namespace
}  // namespace book::train
