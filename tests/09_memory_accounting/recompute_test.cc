// Graded: mem.recompute_segment. Chapter 4's model, 4 blocks: the checkpointed backward (segments
// of 1, 2, 3 and 4 blocks) gives the stored-activation backward's parameter gradients bit for bit;
// the activation bytes it holds are one segment's, counted by a tracker; bad segments refused.
#include "chapters/09_memory_accounting/recompute.h"

#include <gtest/gtest.h>

#include <vector>

#include "chapters/04_training_baseline/data.h"
#include "common/rng.h"
#include "common/testing/exercise.h"
#include "common/testing/expect_error.h"

namespace book::mem {
namespace {

train::Config config() {
  train::Config c;
  const train::AdditionTask task(2);
  c.vocab_size = train::AdditionTask::vocab_size();
  c.context = task.model_context();
  c.n_layer = 4;
  c.n_head = 2;
  c.d_model = 32;
  return c;
}

constexpr int kBatch = 5;

EXERCISE_TEST("mem.recompute_segment", Recompute, GradientsUnchangedBitForBit) {
  const train::Config c = config();
  train::Model<float> model(c, kBatch);
  model.init(17);
  const train::AdditionTask task(2);
  Rng rng(3);
  const train::Batch data = task.batch(rng, train::Split::kTrain, kBatch);
  model.zero_grad();
  const float loss = model.forward(data.tokens.data(), data.targets.data(), kBatch, data.seq_len);
  model.backward();
  const std::vector<float> expected(model.grads().begin(), model.grads().end());
  for (int segment = 1; segment <= c.n_layer; ++segment) {
    RecomputeBuffers buffers(c, segment, kBatch);
    std::fill(model.grads().begin(), model.grads().end(), 0.0f);
    EXPECT_EQ(model.forward(data.tokens.data(), data.targets.data(), kBatch, data.seq_len), loss);
    checkpointed_backward(model, buffers);
    std::size_t differ = 0, first_bad = 0;
    for (std::size_t i = 0; i < expected.size(); ++i)
      if (model.grads()[i] != expected[i] && differ++ == 0) first_bad = i;
    EXPECT_EQ(differ, 0u) << "segment " << segment << ": " << differ << " of " << expected.size()
                          << " gradients differ; first at " << first_bad << ": "
                          << model.grads()[first_bad] << " vs " << expected[first_bad];
  }
}

EXERCISE_TEST("mem.recompute_segment", Recompute, HoldsOneSegmentOfActivations) {
  const train::Config c = config();
  const train::TensorParallelSlice whole;
  const std::size_t block = train::BlockActivations<float>(c, whole, kBatch, c.context).bytes();
  const std::size_t row_bytes = std::size_t{kBatch} * c.context * c.d_model * sizeof(float);
  for (int segment = 1; segment <= c.n_layer; ++segment) {
    MemoryTracker tracker;
    RecomputeBuffers buffers(c, segment, kBatch, &tracker);
    // One segment's blocks and the inputs of all but its first block, against L blocks stored.
    const std::size_t held = segment * block + (segment - 1) * row_bytes;
    EXPECT_EQ(tracker.current(MemoryCategory::kActivations), held) << "segment " << segment;
    if (segment < c.n_layer) {
      EXPECT_LT(held, c.n_layer * block) << "segment " << segment;
    }
    // And the recomputing backward allocates nothing more.
    train::Model<float> model(c, kBatch);
    model.init(1);
    const train::AdditionTask task(2);
    Rng rng(4);
    const train::Batch data = task.batch(rng, train::Split::kTrain, kBatch);
    model.forward(data.tokens.data(), data.targets.data(), kBatch, data.seq_len);
    tracker.reset_peaks();
    checkpointed_backward(model, buffers);
    EXPECT_EQ(tracker.peak(MemoryCategory::kActivations), held) << "segment " << segment;
  }
}

EXERCISE_TEST("mem.recompute_segment", Recompute, BadSegmentsAreRefused) {
  const train::Config c = config();
  train::Model<float> model(c, kBatch);
  RecomputeBuffers buffers(c, 2, kBatch);
  const train::ModelTensors<float> p = train::bind(model.layout(), model.params().data());
  std::vector<float> x(std::size_t{kBatch} * c.context * c.d_model, 0.5f), dy = x, dx = x;
  testing::expect_error(
      [&] {
        recompute_segment_backward(c, p, p, 1, 1, kBatch, c.context, x.data(), dy.data(), dx.data(),
                                   buffers);
      },
      "[1, 1)");
  testing::expect_error(
      [&] {
        recompute_segment_backward(c, p, p, 0, 3, kBatch, c.context, x.data(), dy.data(), dx.data(),
                                   buffers);
      },
      {"[0, 3)", "1 to 2"});
}

}  // namespace
}  // namespace book::mem
