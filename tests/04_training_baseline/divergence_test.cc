// Issue 19: options that can only diverge are refused up front (an infinite or huge learning rate,
// AdamW betas of 1 or below 0, a NaN epsilon: each turned the loss into NaN from step 2), and a
// run whose loss or gradient norm turns non-finite stops with an error naming the step instead of
// training on NaN. Scaffolding: both tracks.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <vector>

#include "chapters/04_training_baseline/adamw_state.h"
#include "chapters/04_training_baseline/optimizer.h"
#include "chapters/04_training_baseline/trainer.h"
#include "common/testing/expect_error.h"

namespace book::train {
namespace {

using book::testing::expect_error;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

TrainOptions tiny_options() {
  TrainOptions o;
  o.digits = 2;
  o.model.n_layer = 1;
  o.model.d_model = 8;
  o.model.n_head = 2;
  o.micro_batch = 2;
  o.total_steps = 20;
  o.warmup_steps = 2;
  return o;
}

TEST(Divergence, LearningRatesThatCanOnlyDivergeAreRefused) {
  for (const float lr : {kInf, kNaN, 1e3f, 1.5f}) {
    TrainOptions o = tiny_options();
    o.max_lr = lr;
    expect_error([&] { Trainer{o}; }, {"need 0 <= min_lr <= max_lr <= 1", "3e-3"});
  }
  TrainOptions o = tiny_options();
  o.max_lr = 1.0f;  // the bound itself is a rate AdamW can take
  EXPECT_NO_THROW(Trainer{o});
  expect_error([] { learning_rate(5, 2, 20, kInf, 0); }, "max_lr <= 1");
}

TEST(Divergence, AdamWSettingsThatCanOnlyDivergeAreRefused) {
  struct Case {
    float AdamWConfig::*field;
    float value;
    const char* message;
  };
  const Case cases[] = {
      {&AdamWConfig::beta1, 1.0f, "beta1 must be in [0, 1), got 1"},
      {&AdamWConfig::beta1, -0.1f, "beta1 must be in [0, 1), got -0.1"},
      {&AdamWConfig::beta2, 1.0f, "beta2 must be in [0, 1), got 1"},
      {&AdamWConfig::beta2, kNaN, "beta2 must be in [0, 1), got nan"},
      {&AdamWConfig::epsilon, kNaN, "epsilon must be positive and finite, got nan"},
      {&AdamWConfig::epsilon, 0.0f, "epsilon must be positive and finite, got 0"},
      {&AdamWConfig::epsilon, kInf, "epsilon must be positive and finite, got inf"},
      {&AdamWConfig::weight_decay, -0.5f, "weight_decay must be finite and >= 0, got -0.5"},
      {&AdamWConfig::weight_decay, kInf, "weight_decay must be finite and >= 0, got inf"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.message);
    TrainOptions o = tiny_options();
    o.adamw.*c.field = c.value;
    expect_error([&] { validate(o.adamw); }, c.message);
    expect_error([&] { Trainer{o}; }, c.message);
  }
  TrainOptions o = tiny_options();
  o.clip_norm = kInf;
  expect_error([&] { Trainer{o}; }, "clip_norm must be positive and finite, got inf");
  // adamw_update (what the parallel chapters call) checks them too, and the learning rate.
  Trainer trainer(tiny_options());
  AdamWState state(0, trainer.model().layout().total());
  std::vector<float> params(state.size(), 0.5f), grads(state.size(), 0.25f);
  AdamWConfig bad;
  bad.beta1 = 1.0f;
  expect_error([&] { adamw_update(trainer.model().layout(), state, params, grads, 1e-3f, bad); },
               "beta1 must be in [0, 1), got 1");
  expect_error(
      [&] { adamw_update(trainer.model().layout(), state, params, grads, kInf, AdamWConfig{}); },
      "adamw_update: the learning rate must be in [0, 1], got inf");
  EXPECT_EQ(state.step(), 0) << "a refused update must not count a step";
}

std::vector<float> weights_of(Trainer& t) {
  return {t.model().params().begin(), t.model().params().end()};
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

TEST(Divergence, ARunWhoseLossIsNotFiniteStopsNamingTheStep) {
  for (const DType precision : {DType::kF32, DType::kBF16}) {
    SCOPED_TRACE(dtype_name(precision));
    TrainOptions o = tiny_options();
    o.precision = precision;
    Trainer trainer(o);
    trainer.step();
    trainer.step();
    // A diverged weight (as a too-large step would leave it) poisons every later loss.
    trainer.model().params()[trainer.model().layout().find("lnf_gain").offset] = kNaN;
    const std::vector<float> before = weights_of(trainer);
    expect_error([&] { trainer.step(); },
                 {"step 3: the training loss is nan (" + std::string(dtype_name(precision)) + ")",
                  "the run has diverged", "No update was applied", "lower max_lr"});
    EXPECT_EQ(trainer.steps_done(), 2) << "the refused step must not be counted";
    EXPECT_TRUE(same_bits(weights_of(trainer), before)) << "the refused step changed the weights";
  }
}

TEST(Divergence, TheSharedChecksNameTheCallerTheStepAndWhatToChange) {
  // check_trainable and check_not_diverged are what every trainer of chapters 4-7 calls.
  TrainOptions o = tiny_options();
  o.adamw.beta1 = 1.0f;
  expect_error([&] { check_trainable(o, "my trainer"); }, "beta1 must be in [0, 1), got 1");
  o = tiny_options();
  o.accumulation = 0;
  expect_error([&] { check_trainable(o, "my trainer"); },
               "my trainer: micro_batch and accumulation must be >= 1, got 2 and 0");
  o = tiny_options();
  o.max_lr = kInf;
  expect_error([&] { check_trainable(o, "my trainer"); }, "max_lr <= 1");
  EXPECT_NO_THROW(check_trainable(tiny_options(), "my trainer"));

  StepResult step = begin_step(tiny_options(), 6, 1024.0f);
  EXPECT_EQ(step.step, 7);
  EXPECT_EQ(step.lr, learning_rate(7, 2, 20, tiny_options().max_lr, tiny_options().min_lr));
  EXPECT_EQ(step.loss_scale, 1.0f) << "FP32 has no loss scale";
  o = tiny_options();
  o.precision = DType::kF16;
  EXPECT_EQ(begin_step(o, 6, 1024.0f).loss_scale, 1024.0f);

  step.loss = 2.5f;
  EXPECT_NO_THROW(check_not_diverged(tiny_options(), step));
  expect_error([&] { check_not_diverged(tiny_options(), step, /*gradients_finite=*/false); },
               {"step 7: the gradients are not all finite (f32, loss 2.5)",
                "the run has diverged", "lower max_lr"});
  step.loss = -kInf;
  expect_error([&] { check_not_diverged(tiny_options(), step); },
               "step 7: the training loss is -inf (f32)");
  EXPECT_NO_THROW(check_not_diverged(o, step, false)) << "FP16: the loss scaler's rule";
}

TEST(Divergence, FP16LeavesANonFiniteLossToItsLossScaler) {
  TrainOptions o = tiny_options();
  o.precision = DType::kF16;
  Trainer trainer(o);
  trainer.model().params()[trainer.model().layout().find("lnf_gain").offset] = kNaN;
  const float scale = trainer.scaler().scale();
  const StepResult r = trainer.step();
  EXPECT_TRUE(r.skipped) << "FP16's rule: a step with non-finite gradients is skipped";
  EXPECT_EQ(trainer.scaler().scale(), scale / 2);
  EXPECT_EQ(trainer.steps_done(), 1);
}

}  // namespace
}  // namespace book::train
