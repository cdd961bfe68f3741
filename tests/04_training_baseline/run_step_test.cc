// The step's order, written once (step.h's run_step): a recording StepParts shows the calls in
// order, the loss scale each micro-batch gets, the "last" flag, the FP16 skip (no update, the scale
// halved), and the stops of a diverged FP32 run before any update; unscaled_sum_of_squares goes
// through 16 bits; StepSpan adds its time to a counter and records one box. Scaffolding: both
// tracks.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "chapters/04_training_baseline/step.h"
#include "chapters/04_training_baseline/trainer.h"
#include "common/testing/expect_error.h"
#include "common/trace.h"

namespace book::train {
namespace {

using book::testing::expect_error;

// Records every call; the answers it gives are set by the test.
class RecordingParts : public StepParts {
 public:
  std::vector<std::string> calls;
  std::vector<float> scales;  // the loss scale each micro_batch got
  float loss = 2.0f;          // each micro-batch's loss
  bool finite = true;         // unscale_gradients' answer
  float unscaled_by = 0;      // unscale_gradients' loss scale
  float lr = 0;               // clip_and_update's learning rate

  void zero_gradients() override { calls.push_back("zero"); }
  Batch next_batch() override {
    calls.push_back("batch");
    return {};
  }
  double micro_batch(const Batch&, float loss_scale, bool last) override {
    calls.push_back(last ? "micro last" : "micro");
    scales.push_back(loss_scale);
    return loss;
  }
  void synchronize_gradients(bool last) override {
    calls.push_back(last ? "sync last" : "sync");
  }
  float mean_loss(double loss_sum, int micro_batches) override {
    calls.push_back("loss");
    return static_cast<float>(loss_sum / micro_batches);
  }
  bool unscale_gradients(float loss_scale) override {
    calls.push_back("unscale");
    unscaled_by = loss_scale;
    return finite;
  }
  double clip_and_update(float learning_rate) override {
    calls.push_back("update");
    lr = learning_rate;
    return 0.5;
  }
};

TrainOptions options(DType precision, int accumulation) {
  TrainOptions o;
  o.precision = precision;
  o.accumulation = accumulation;
  o.total_steps = 10;
  o.warmup_steps = 2;
  return o;
}

TEST(RunStep, CallsThePartsInTheStepsOrder) {
  const TrainOptions o = options(DType::kF32, 3);
  LossScaler scaler;
  RecordingParts parts;
  const StepResult result = run_step(o, 4, scaler, parts);
  const std::vector<std::string> want = {"zero",  "batch", "micro", "sync",       "batch",
                                         "micro", "sync",  "batch", "micro last", "sync last",
                                         "loss",  "unscale", "update"};
  EXPECT_EQ(parts.calls, want);
  for (float s : parts.scales) EXPECT_EQ(s, 1.0f / 3.0f) << "FP32: loss scale 1 / accumulation";
  EXPECT_EQ(parts.unscaled_by, 1.0f);
  EXPECT_EQ(result.step, 5);
  EXPECT_EQ(result.loss, 2.0f);
  EXPECT_EQ(result.grad_norm, 0.5);
  EXPECT_EQ(result.lr, learning_rate(5, o.warmup_steps, o.total_steps, o.max_lr, o.min_lr));
  EXPECT_EQ(parts.lr, result.lr);
  EXPECT_FALSE(result.skipped);
}

TEST(RunStep, Fp16ScalesTheLossAndSkipsAnOverflowedStep) {
  const TrainOptions o = options(DType::kF16, 2);
  LossScaler scaler;
  const float scale = scaler.scale();
  RecordingParts parts;
  parts.finite = false;
  const StepResult result = run_step(o, 0, scaler, parts);
  for (float s : parts.scales) EXPECT_EQ(s, scale / 2) << "FP16: loss scale / accumulation";
  EXPECT_EQ(parts.unscaled_by, scale);
  EXPECT_TRUE(result.skipped);
  EXPECT_EQ(result.grad_norm, 0.0);
  EXPECT_EQ(parts.calls.back(), "unscale") << "a skipped step must not update";
  EXPECT_EQ(scaler.scale(), scale * o.scaler.backoff_factor);
}

TEST(RunStep, StopsADivergedRunBeforeTheUpdate) {
  const TrainOptions o = options(DType::kF32, 1);
  LossScaler scaler;
  RecordingParts nan_loss;
  nan_loss.loss = std::numeric_limits<float>::quiet_NaN();
  expect_error([&] { run_step(o, 6, scaler, nan_loss); }, "step 7: the training loss is nan");
  EXPECT_EQ(nan_loss.calls.back(), "loss") << "nothing after the loss may run";
  RecordingParts bad_gradients;
  bad_gradients.finite = false;
  expect_error([&] { run_step(o, 6, scaler, bad_gradients); },
               "step 7: the gradients are not all finite");
  EXPECT_EQ(bad_gradients.calls.back(), "unscale") << "no update after non-finite gradients";
}

TEST(UnscaledSumOfSquares, GoesThrough16BitsThenUnscales) {
  std::vector<std::uint16_t> bits(3);
  std::vector<float> f16 = {8.0f, 1.0e-9f, -3.0f};  // 1e-9 flushes to 0 in FP16
  EXPECT_EQ(unscaled_sum_of_squares(DType::kF16, f16, bits, 2.0f), 16.0 + 0.0 + 2.25);
  EXPECT_EQ(f16, (std::vector<float>{4.0f, 0.0f, -1.5f})) << "the gradients, unscaled in place";
  std::vector<float> overflow = {70000.0f, 1.0f, 1.0f};  // past FP16's 65504
  EXPECT_FALSE(std::isfinite(unscaled_sum_of_squares(DType::kF16, overflow, bits, 2.0f)));
  std::vector<float> bf16 = {1.0f + 1.0f / 1024, 2.0f, 0.0f};  // BF16 keeps 8 bits of mantissa
  EXPECT_EQ(unscaled_sum_of_squares(DType::kBF16, bf16, bits, 1.0f), 1.0 + 4.0);
  std::vector<float> f32 = {1.0f + 1.0f / 1024, 3.0f, 0.0f};  // FP32: as it is, not unscaled
  const double want = static_cast<double>(f32[0]) * f32[0] + 9.0;
  EXPECT_EQ(unscaled_sum_of_squares(DType::kF32, f32, {}, 4.0f), want);
  EXPECT_EQ(f32[1], 3.0f);
}

TEST(StepSpan, AddsItsTimeAndRecordsOneBox) {
  Trace trace;
  double seconds = 1.0;
  {
    const StepSpan span(&trace, 3, "compute", "forward", "forward", &seconds);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));  // a lower bound, not a timing
  }
  EXPECT_GE(seconds, 1.002) << "the span's time is added to what the counter held";
  const std::vector<Trace::Event> events = trace.events();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].name, "forward");
  EXPECT_EQ(events[0].category, "forward");
  EXPECT_EQ(events[0].lane, "compute");
  EXPECT_EQ(events[0].rank, 3);
  { const StepSpan untraced(nullptr, 0, "compute", "data", "data"); }  // records nothing
  EXPECT_EQ(trace.events().size(), 1u);
}

}  // namespace
}  // namespace book::train
