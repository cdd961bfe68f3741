// The OOM remedies as switches of chapter 4's real Trainer: each keeps the training (recomputation
// bit for bit, tiled attention and 8-bit Adam within stated tolerances, offload bit for bit), and
// the trainer's tracker peaks at exactly the bytes predict_remedies says, per category.
#include "chapters/09_memory_accounting/trainer_remedies.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>

#include "chapters/04_training_baseline/step.h"
#include "common/rng.h"
#include "common/testing/expect_error.h"

namespace book::mem {
namespace {

train::TrainOptions small(DType precision, int micro_batch = 8) {
  train::TrainOptions o;
  o.precision = precision;
  o.micro_batch = micro_batch;
  o.total_steps = 100;
  o.warmup_steps = 2;
  return o;
}

std::string describe(const train::TrainOptions& o, const Remedies& r) {
  return std::string(dtype_name(o.precision)) + ", micro-batch " + std::to_string(o.micro_batch) +
         " x " + std::to_string(o.accumulation) + ", recompute " + recomputation_name(r.recompute) +
         (r.tiled_attention ? ", tiled" : "") + (r.offload ? ", offload" : "") +
         (r.adam_8bit ? ", 8-bit" : "");
}

void expect_predicted(const train::TrainOptions& o, const Remedies& r) {
  const RemedyMeasurement m = measure_remedies(o, r, 2);
  const RemedyPrediction p = predict_remedies(o, r);
  for (MemoryCategory c : all_memory_categories()) {
    EXPECT_EQ(m.device[c], p.device[c])
        << "device " << memory_category_name(c) << " (" << describe(o, r) << "): measured "
        << m.device[c] << ", predicted " << p.device[c];
    EXPECT_EQ(m.host[c], p.host[c]) << "host " << memory_category_name(c) << " (" << describe(o, r)
                                    << "): measured " << m.host[c] << ", predicted " << p.host[c];
  }
  // Every transient is in kOther and happens while the rest is live: the total peak is the sum.
  EXPECT_EQ(m.device_peak, p.device.total()) << describe(o, r);
}

// The ladder, cumulative, as the stage runs it: every rung's measured peak is the prediction.
TEST(TrainerRemedies, MeasuredPeakEqualsPredictedOnEveryRung) {
  for (DType precision : {DType::kF32, DType::kBF16}) {
    train::TrainOptions o = small(precision, 12);
    Remedies r;
    expect_predicted(o, r);
    o.micro_batch = 4;
    o.accumulation = 3;
    expect_predicted(o, r);
    r.recompute = Recomputation::kSelective;
    expect_predicted(o, r);
    r.recompute = Recomputation::kFull;
    expect_predicted(o, r);
    r.offload = true;
    expect_predicted(o, r);
    r.adam_8bit = true;
    r.adam_8bit_block = 1000;  // not a divisor of Ψ: a short last block
    expect_predicted(o, r);
    r.tiled_attention = true;
    r.tile = 3;  // not a divisor of T = 10
    expect_predicted(o, r);
  }
}

TEST(TrainerRemedies, EachRemedyAloneIsPredicted) {
  const train::TrainOptions o = small(DType::kBF16, 5);
  for (Remedies r : {Remedies{.tiled_attention = true, .tile = 4},
                     Remedies{.recompute = Recomputation::kSelective, .tiled_attention = true},
                     Remedies{.adam_8bit = true}, Remedies{.offload = true}})
    expect_predicted(o, r);
  train::TrainOptions f32 = small(DType::kF32, 5);
  expect_predicted(f32, Remedies{.offload = true, .adam_8bit = true});
}

// Recomputation reruns the same deterministic kernels on the same numbers: losses and weights
// after several steps equal the plain trainer's bit for bit, and each rung drops the peak.
TEST(TrainerRemedies, RecomputationKeepsTrainingBitForBit) {
  for (DType precision : {DType::kF32, DType::kBF16}) {
    const train::TrainOptions o = small(precision, 6);
    const RemedyMeasurement plain = measure_remedies(o, {}, 3);
    std::size_t previous = plain.device_peak;
    for (Recomputation mode : {Recomputation::kSelective, Recomputation::kFull}) {
      const RemedyMeasurement m = measure_remedies(o, {.recompute = mode}, 3);
      ASSERT_EQ(m.losses.size(), plain.losses.size());
      for (std::size_t i = 0; i < m.losses.size(); ++i)
        EXPECT_EQ(std::memcmp(&m.losses[i], &plain.losses[i], sizeof(float)), 0)
            << recomputation_name(mode) << ", step " << i + 1 << ": " << m.losses[i] << " vs plain "
            << plain.losses[i];
      ASSERT_EQ(m.final_weights.size(), plain.final_weights.size());
      EXPECT_EQ(std::memcmp(m.final_weights.data(), plain.final_weights.data(),
                            m.final_weights.size() * sizeof(float)),
                0)
          << recomputation_name(mode) << " (" << dtype_name(precision)
          << "): weights differ from the plain trainer's after 3 steps";
      EXPECT_LT(m.device_peak, previous) << recomputation_name(mode);
      previous = m.device_peak;
    }
  }
}

// Offload moves where the optimizer runs, not what it computes: the same weights bit for bit, and
// 2 + 2 bytes per parameter over the link each step in BF16.
TEST(TrainerRemedies, OffloadKeepsTrainingBitForBitAndCountsTheLink) {
  const train::TrainOptions o = small(DType::kBF16, 6);
  const RemedyMeasurement plain = measure_remedies(o, {}, 3);
  const RemedyMeasurement m = measure_remedies(o, {.offload = true}, 3);
  EXPECT_EQ(std::memcmp(m.final_weights.data(), plain.final_weights.data(),
                        m.final_weights.size() * sizeof(float)),
            0);
  const std::size_t psi = plain.final_weights.size();
  EXPECT_EQ(m.moved.to_host, 3 * 2 * psi);
  EXPECT_EQ(m.moved.to_device, 3 * 2 * psi);
  EXPECT_EQ(m.device[MemoryCategory::kOptimizerStates], 0u);
  EXPECT_EQ(m.device[MemoryCategory::kMasterWeights], 0u);
  EXPECT_EQ(m.host[MemoryCategory::kMasterWeights] + m.host[MemoryCategory::kOptimizerStates],
            12 * psi);
  EXPECT_EQ(plain.device_peak - m.device_peak, 12 * psi);
}

// Tiled attention computes the same softmax in another order: losses within 1e-5 relative over 3
// steps, and one backward's gradients within 1e-5 of chapter 4's attention's (float).
TEST(TrainerRemedies, TiledAttentionMatchesWithinTolerance) {
  const train::TrainOptions o = small(DType::kF32, 6);
  const RemedyMeasurement plain = measure_remedies(o, {}, 3);
  const RemedyMeasurement m = measure_remedies(o, {.tiled_attention = true, .tile = 4}, 3);
  for (std::size_t i = 0; i < m.losses.size(); ++i)
    EXPECT_NEAR(m.losses[i], plain.losses[i], 1e-5 * std::abs(plain.losses[i])) << "step " << i + 1;

  train::Config config = o.model;
  config.vocab_size = 13;
  config.context = 10;
  const TiledAttention<float> tiled(3);
  train::ModelOptions<float> with_tiled;
  with_tiled.attention = &tiled;
  train::Model<float> a(config, 3), b(config, 3, with_tiled);
  a.init(5);
  b.init(5);
  train::Batch batch;
  batch.batch = 3;
  batch.seq_len = 9;  // shorter than the context
  Rng rng(11);
  for (int i = 0; i < 27; ++i) {
    batch.tokens.push_back(static_cast<int>(rng.next_u64() % 13));
    batch.targets.push_back(static_cast<int>(rng.next_u64() % 13));
  }
  const float la = train::forward_backward(a, batch, 1.0f);
  const float lb = train::forward_backward(b, batch, 1.0f);
  EXPECT_NEAR(la, lb, 1e-6 * std::abs(la));
  double worst = 0;
  for (std::size_t i = 0; i < a.grads().size(); ++i)
    worst = std::max(worst, static_cast<double>(std::abs(a.grads()[i] - b.grads()[i])));
  EXPECT_LT(worst, 1e-5) << "largest gradient difference, tiled vs chapter 4's attention";
}

// 8-bit moments are an approximation: after 40 steps the loss is within 5% of FP32 Adam's.
TEST(TrainerRemedies, EightBitAdamTrainsWithinFivePercent) {
  train::TrainOptions o = small(DType::kBF16, 16);
  const RemedyMeasurement plain = measure_remedies(o, {}, 40);
  const RemedyMeasurement m = measure_remedies(o, {.adam_8bit = true, .adam_8bit_block = 256}, 40);
  const float a = plain.losses.back(), b = m.losses.back();
  EXPECT_LT(std::abs(a - b), 0.05 * a) << "FP32 Adam " << a << ", 8-bit " << b;
  EXPECT_LT(b, m.losses.front() * 0.8)
      << "the 8-bit run did not train: " << m.losses.front() << " -> " << b;
}

TEST(TrainerRemedies, BadRemediesAreRefused) {
  const train::TrainOptions o = small(DType::kBF16, 4);
  testing::expect_error([&] { predict_remedies(o, {.tiled_attention = true, .tile = 0}); },
                        {"tile must be >= 1", "got 0"});
  testing::expect_error([&] { measure_remedies(o, {.adam_8bit = true, .adam_8bit_block = -3}, 1); },
                        {"adam_8bit_block must be >= 1", "got -3"});
  testing::expect_error([] { TiledAttention<float>(-1); }, {"tile must be >= 1", "got -1"});
  // A run whose optimizer state a checkpoint cannot hold refuses to save one.
  MemoryTracker tracker;
  train::TrainOptions with8 = o;
  with8.optimizer = [](const train::ParameterLayout& layout, MemoryTracker* t) {
    return std::unique_ptr<train::TrainerOptimizer>(
        std::make_unique<Adam8bitOptimizer>(layout, 64, t));
  };
  train::Trainer trainer(with8, &tracker);
  testing::expect_error([&] { trainer.save("/tmp/never_written.ckpt"); },
                        {"save", "TrainOptions::optimizer"});
}

}  // namespace
}  // namespace book::mem
