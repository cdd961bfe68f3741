// Graded test of SmoothQuant on one layer with activation outliers of its own: the error curve over
// α has its minimum inside (0, 1), well below no smoothing, and both ends are worse (the
// activations keep the outliers at α = 0, the weights take them at α = 1).
#include <gtest/gtest.h>

#include "chapters/14_quantization/layer_sweep.h"
#include "common/testing/exercise.h"
#include "common/testing/expect_error.h"

namespace book::quant {
namespace {

EXERCISE_TEST("quant.smooth_scales", LayerSweep, MinimumInsideAndFarBelowNoSmoothing) {
  LayerSweepOptions options;
  options.tokens = 64;
  options.in = 128;
  options.out = 64;
  options.outlier_channels = 3;
  options.steps = 10;
  const LayerSweep sweep = layer_alpha_sweep(options);
  ASSERT_EQ(sweep.points.size(), 11u);
  const double best = sweep.best_alpha();
  EXPECT_GT(best, 0.2);
  EXPECT_LT(best, 0.9);
  double best_error = 1e9;
  for (const LayerSweepPoint& p : sweep.points) best_error = std::min(best_error, p.error);
  EXPECT_LT(best_error, sweep.error_unsmoothed / 2) << "smoothing at the best α halves the error";
  EXPECT_GT(sweep.points.front().error, 1.5 * best_error) << "α = 0 leaves the outliers";
  EXPECT_GT(sweep.points.back().error, 1.5 * best_error) << "α = 1 moves them into the weights";
  EXPECT_GE(best_error, sweep.error_weight_only) << "INT8 weights alone are the floor";
  // The activations' range shrinks and the weights' grows as α rises.
  EXPECT_GT(sweep.points.front().activation_range, 3 * sweep.points.back().activation_range);
  EXPECT_LT(sweep.points.front().weight_range, sweep.points.back().weight_range);
}

EXERCISE_TEST("quant.smooth_scales", LayerSweep, RefusesBadOptions) {
  LayerSweepOptions options;
  options.in = 4;
  options.outlier_channels = 5;
  book::testing::expect_error([&] { layer_alpha_sweep(options); }, "5 outlier channels of 4");
  options = {};
  options.outlier_scale = 0;
  book::testing::expect_error([&] { layer_alpha_sweep(options); }, "outlier scale 0");
  options = {};
  options.steps = 0;
  book::testing::expect_error([&] { layer_alpha_sweep(options); }, "steps 0");
  // And the sweep really calls the exercise: a valid tiny case runs.
  options = {};
  options.tokens = options.in = options.out = 8;
  options.outlier_channels = 1;
  options.steps = 2;
  EXPECT_EQ(layer_alpha_sweep(options).points.size(), 3u);
}

}  // namespace
}  // namespace book::quant
