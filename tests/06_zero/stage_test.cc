// Graded: one row of the zero stage, measured on 2 thread ranks: its bytes and traffic equal the
// formulas and its losses chapter 5's DDP (it runs the trainer, so it needs both exercises).
#include <gtest/gtest.h>

#include <vector>

#include "chapters/06_zero/stage.h"
#include "common/testing/exercise.h"

namespace book::zero::stage {
namespace {

// One row, measured on 2 thread ranks: the counts equal the formulas, the losses chapter 5's.
EXERCISE_TEST("zero.reduce_scatter_gradients", Stage, MeasuredRowMatchesItsFormulas) {
  StageOptions o;
  o.steps = 1;
  o.d_model = 16;
  const Row row = measure(o, Stage::kZero2, 2);
  EXPECT_EQ(row.measured, row.formula);
  EXPECT_EQ(row.measured, 2 * row.parameters + 14 * row.owned);
  EXPECT_EQ(row.traffic, row.traffic_formula);
  EXPECT_EQ(row.gradient_peak, 2 * row.owned);
  EXPECT_LT(row.loss_deviation, 1e-4) << "bf16: ZeRO reduces 16-bit gradients, DDP FP32 ones";
}

// ZeRO-3's row: 16 bytes per owned parameter, the ring's traffic, bf16 losses near DDP's.
EXERCISE_TEST("zero.gather_layer_parameters", Stage, Zero3RowMatchesItsFormulas) {
  StageOptions o;
  o.steps = 1;
  o.d_model = 16;
  const Row row = measure(o, Stage::kZero3, 2);
  EXPECT_EQ(row.measured, row.formula);
  EXPECT_EQ(row.measured, 16 * row.owned);
  EXPECT_EQ(row.traffic, row.traffic_formula);
  EXPECT_EQ(row.gradient_peak, 2 * row.owned);
  EXPECT_GT(row.buffers, 0u);
  EXPECT_LT(row.loss_deviation, 1e-3) << "bf16: ZeRO-3 accumulates 16-bit reduced gradients";
}

}  // namespace
}  // namespace book::zero::stage
