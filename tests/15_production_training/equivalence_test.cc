// Graded tests of prod.loss_equivalence on hand-made loss curves: equal curves, a curve that
// leaves the tolerance at a known step, a NaN, bit for bit against within a tolerance, from_step,
// and every refusal.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "chapters/15_production_training/equivalence.h"
#include "common/testing/exercise.h"
#include "common/testing/expect_error.h"

namespace book::prod {
namespace {

using book::testing::expect_error;

// A falling loss curve, 2.5 at step 1, as a run would print it.
std::vector<float> curve(int steps) {
  std::vector<float> loss;
  for (int s = 1; s <= steps; ++s) loss.push_back(2.5f * std::exp(-0.01f * s) + 0.3f);
  return loss;
}

EXERCISE_TEST("prod.loss_equivalence", LossEquivalence, EqualCurvesAreEqual) {
  const std::vector<float> a = curve(40);
  for (bool bits : {false, true}) {
    EquivalenceRule rule;
    rule.bit_exact = bits;
    const Equivalence e = compare_losses(a, a, rule);
    EXPECT_TRUE(e.equal) << "bit_exact " << bits;
    EXPECT_EQ(e.first_divergent_step, -1);
    EXPECT_EQ(e.largest_difference, 0.0);
    EXPECT_EQ(e.steps_compared, 40);
  }
}

EXERCISE_TEST("prod.loss_equivalence", LossEquivalence, DivergesAtTheFirstStepOutsideTheTolerance) {
  const std::vector<float> a = curve(30);
  std::vector<float> b = a;
  b[9] += 0.0005f;  // step 10: within 1e-3
  b[16] += 0.002f;  // step 17: out
  b[24] -= 0.004f;  // step 25: out, larger
  const Equivalence e = compare_losses(a, b, EquivalenceRule{});
  EXPECT_FALSE(e.equal);
  EXPECT_EQ(e.first_divergent_step, 17) << "step 10 moved 5e-4 (inside 1e-3), step 17 2e-3";
  EXPECT_NEAR(e.largest_difference, 0.004, 1e-6) << "the largest over every step, also after "
                                                    "the first divergence";
  EXPECT_EQ(e.steps_compared, 30);
}

EXERCISE_TEST("prod.loss_equivalence", LossEquivalence, ANonFiniteLossIsADivergence) {
  const std::vector<float> a = curve(12);
  for (float bad :
       {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
    std::vector<float> b = a;
    b[6] = bad;
    const Equivalence e = compare_losses(a, b, EquivalenceRule{});
    EXPECT_FALSE(e.equal) << bad;
    EXPECT_EQ(e.first_divergent_step, 7) << bad;
    EXPECT_TRUE(std::isinf(e.largest_difference)) << bad;
    // A NaN in both arms is no agreement: the run diverged.
    const Equivalence both = compare_losses(b, b, EquivalenceRule{});
    EXPECT_FALSE(both.equal) << "both arms " << bad;
    EXPECT_EQ(both.first_divergent_step, 7);
  }
}

EXERCISE_TEST("prod.loss_equivalence", LossEquivalence, BitExactCatchesWhatTheToleranceAllows) {
  const std::vector<float> a = curve(20);
  std::vector<float> b = a;
  b[4] = std::nextafter(a[4], 10.0f);  // step 5: one unit in the last place
  EXPECT_TRUE(compare_losses(a, b, EquivalenceRule{}).equal) << "1 ulp is within 1e-3";
  EquivalenceRule bits;
  bits.bit_exact = true;
  bits.tolerance = 1.0;  // ignored under bit_exact
  const Equivalence e = compare_losses(a, b, bits);
  EXPECT_FALSE(e.equal);
  EXPECT_EQ(e.first_divergent_step, 5);
  EXPECT_GT(e.largest_difference, 0.0);
  EXPECT_LT(e.largest_difference, 1e-6);
  EquivalenceRule zero;
  zero.tolerance = 0;
  EXPECT_EQ(compare_losses(a, b, zero).first_divergent_step, 5) << "tolerance 0: any difference";
}

EXERCISE_TEST("prod.loss_equivalence", LossEquivalence, FromStepSkipsTheStepsBefore) {
  const std::vector<float> a = curve(10);
  std::vector<float> b = a;
  b[1] += 0.5f;  // step 2
  b[7] += 0.5f;  // step 8
  EquivalenceRule rule;
  rule.from_step = 3;
  const Equivalence e = compare_losses(a, b, rule);
  EXPECT_EQ(e.first_divergent_step, 8);
  EXPECT_EQ(e.steps_compared, 8) << "steps 3..10";
  rule.from_step = 9;
  const Equivalence tail = compare_losses(a, b, rule);
  EXPECT_TRUE(tail.equal);
  EXPECT_EQ(tail.steps_compared, 2);
  EXPECT_EQ(tail.largest_difference, 0.0) << "step 8 is not compared";
}

EXERCISE_TEST("prod.loss_equivalence", LossEquivalence, Refusals) {
  const std::vector<float> a = curve(5), shorter = curve(4), none;
  expect_error([&] { compare_losses(a, shorter, EquivalenceRule{}); },
               {"baseline has 5 steps, the candidate 4", "same steps"});
  expect_error([&] { compare_losses(none, none, EquivalenceRule{}); }, "no steps to compare");
  for (double bad :
       {-1e-3, std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()}) {
    EquivalenceRule rule;
    rule.tolerance = bad;
    expect_error([&] { compare_losses(a, a, rule); }, "tolerance must be finite and >= 0");
  }
  for (std::int64_t step : {0, -2, 6}) {
    EquivalenceRule rule;
    rule.from_step = step;
    expect_error([&] { compare_losses(a, a, rule); },
                 {"from_step " + std::to_string(step), "outside the run's steps 1..5"});
  }
}

}  // namespace
}  // namespace book::prod
