// The train stage's command line and the claims its numbers allow, without training (issue 19: a
// 10-step run printed "0.0% ... well above chance"). Scaffolding: both tracks.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "chapters/04_training_baseline/train_stage.h"
#include "common/flags.h"
#include "common/testing/expect_error.h"

namespace book::train {
namespace {

using book::testing::expect_error;

TEST(TrainStage, FlagsDefaultsTourAndRefusals) {
  const StageArgs plain = parse_stage_args({});
  EXPECT_EQ(plain.steps, 3000);
  EXPECT_EQ(plain.digits, 3);
  EXPECT_EQ(plain.precision, DType::kF32);
  const StageArgs tour = parse_stage_args({"--tour"});
  EXPECT_EQ(tour.steps, 800);
  EXPECT_EQ(tour.digits, 2);
  EXPECT_EQ(parse_stage_args({"--tour", "--steps=50"}).steps, 50);
  EXPECT_EQ(parse_stage_args({"--precision", "fp16"}).precision, DType::kF16);
  expect_error([] { parse_stage_args({"--steps=9"}); }, {"--steps", "10..100000000", "9"});
  expect_error([] { parse_stage_args({"--steps=1e3"}); }, {"--steps", "1e3"});
  expect_error([] { parse_stage_args({"--digits", "7"}); }, {"--digits", "1..6", "7"});
  expect_error([] { parse_stage_args({"--precision=f64"}); }, {"--precision", "f64"});
  expect_error([] { parse_stage_args({"--step=5"}); }, {"unknown flag --step", "--steps"});
  expect_error([] { parse_stage_args({"--threads"}); }, {"--threads needs a value"});
  expect_error([] { parse_stage_args({"40"}); }, {"unexpected argument '40'"});
  EXPECT_THROW(parse_stage_args({"--help"}), HelpRequested);
}

TEST(TrainStage, AccuracyIsCalledAboveChanceOnlyWhenItIs) {
  const double chance = 1e-4;  // 3-digit addition: one sum in 10^4
  EXPECT_FALSE(well_above_chance(0.0, chance, 1000)) << "0.0% is not above chance";
  EXPECT_FALSE(well_above_chance(0.001, chance, 1000)) << "one right answer is luck";
  EXPECT_FALSE(well_above_chance(0.009, chance, 1000)) << "9 right answers: still fewer than 10";
  EXPECT_TRUE(well_above_chance(0.010, chance, 1000));
  EXPECT_TRUE(well_above_chance(0.97, chance, 1000));
  EXPECT_FALSE(well_above_chance(0.5, 0.2, 1000)) << "2.5x chance is not 'well above'";
  EXPECT_EQ(accuracy_verdict(0.0, chance, 1000, 10),
            "not above chance (0.01%) after 10 steps: train longer (--steps 3000)");
  EXPECT_EQ(accuracy_verdict(0.97, chance, 1000, 3000), "well above chance (0.01%)");
}

TEST(TrainStage, TheLossIsSaidToFallOnlyWhenItFellByATenth) {
  EXPECT_TRUE(loss_fell(2.4, 0.05));
  EXPECT_TRUE(loss_fell(2.4, 2.16));
  EXPECT_FALSE(loss_fell(2.4, 2.2));
  EXPECT_FALSE(loss_fell(2.4, 2.5));
  EXPECT_FALSE(loss_fell(2.4, std::numeric_limits<double>::quiet_NaN()));
  EXPECT_EQ(loss_verdict(2.4, 0.05, 800), "the loss falls: the model learns");
  EXPECT_EQ(loss_verdict(2.4, 2.35, 10),
            "the loss did not fall after 10 steps: train longer (--steps 3000)");
}

}  // namespace
}  // namespace book::train
