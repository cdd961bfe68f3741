// Measured = predicted: chapter 4's Trainer runs real steps while its MemoryTracker records the
// peak of every category; the formulas (book_model.h) predict each one to the byte, in FP32, BF16
// and FP16, at several micro-batches, with gradient accumulation, and for another model shape.
#include "chapters/09_memory_accounting/book_model.h"

#include <gtest/gtest.h>

namespace book::mem {
namespace {

void expect_equal(const train::TrainOptions& o) {
  const MemorySnapshot measured = measure_trainer_memory(o, 2);
  const MemorySnapshot predicted = predict_trainer_memory(o);
  for (MemoryCategory c : all_memory_categories())
    EXPECT_EQ(measured[c], predicted[c])
        << memory_category_name(c) << ", " << dtype_name(o.precision) << ", micro-batch "
        << o.micro_batch << " x " << o.accumulation << ", " << o.model.n_layer << " layers, d "
        << o.model.d_model << ": measured " << measured[c] << ", predicted " << predicted[c];
  EXPECT_GT(measured[MemoryCategory::kActivations], 0u);
}

TEST(MeasuredEqualsPredicted, EveryPrecisionAndMicroBatch) {
  for (DType p : {DType::kF32, DType::kBF16, DType::kF16}) {
    for (int micro_batch : {1, 5, 16}) {
      train::TrainOptions o;
      o.precision = p;
      o.micro_batch = micro_batch;
      o.accumulation = micro_batch == 5 ? 3 : 1;
      expect_equal(o);
    }
  }
}

TEST(MeasuredEqualsPredicted, AnotherShapeAndTask) {
  train::TrainOptions o;
  o.model.n_layer = 3;
  o.model.n_head = 2;
  o.model.d_model = 24;
  o.digits = 2;
  o.micro_batch = 3;
  o.precision = DType::kBF16;
  expect_equal(o);
  o.precision = DType::kF32;
  expect_equal(o);
}

TEST(MeasuredEqualsPredicted, MixedPrecisionIsSixteenBytesPerParameter) {
  train::TrainOptions o;
  o.precision = DType::kBF16;
  const MemorySnapshot m = measure_trainer_memory(o, 1);
  const std::uint64_t state = m[MemoryCategory::kParameters] + m[MemoryCategory::kGradients] +
                              m[MemoryCategory::kMasterWeights] +
                              m[MemoryCategory::kOptimizerStates];
  train::Trainer t(o);
  EXPECT_EQ(state, 16u * static_cast<std::uint64_t>(t.model().layout().total()));
}

TEST(MeasuredEqualsPredicted, AccumulationCutsActivationsByTheMicroBatchRatio) {
  train::TrainOptions big, small;
  big.micro_batch = 32;
  small.micro_batch = 8;
  small.accumulation = 4;
  const std::size_t a_big = measure_trainer_memory(big)[MemoryCategory::kActivations];
  const std::size_t a_small = measure_trainer_memory(small)[MemoryCategory::kActivations];
  EXPECT_EQ(a_big, 4 * a_small);
}

}  // namespace
}  // namespace book::mem
