// Issue 19: shapes, degrees and costs the chapter accepted and then overflowed an int on, or
// answered NaN for, are refused with a book::Error naming the value. Scaffolding: the checks are
// the chapter's own (action.cc, simulator.cc, three_d.cc), the same on both tracks.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "chapters/08_pipeline_parallel/action.h"
#include "chapters/08_pipeline_parallel/simulator.h"
#include "chapters/08_pipeline_parallel/three_d.h"
#include "common/testing/expect_error.h"

namespace book::pp {
namespace {

using book::testing::expect_error;

TEST(BadInput, VirtualStagesThatOverflowAnIntAreRefused) {
  // 65536 × 65536 = 2^32 virtual stages: stages * chunks wrapped (undefined behaviour).
  expect_error(
      [] {
        boundary_messages({65536, 1, 65536});
      },
      {"boundary_messages: stages × chunks = 65536 × 65536 = 4294967296", "fewer"});
  expect_error([] { bubble_formula({1 << 20, 4, 1 << 12}); }, "bubble_formula: stages × chunks");
  // The largest that fits is still counted exactly: 2 · m · (p·v − 1) with p·v = 2^31 − 1.
  EXPECT_EQ(boundary_messages({std::numeric_limits<int>::max(), 3, 1}),
            2LL * 3 * (std::numeric_limits<int>::max() - 1LL));
}

TEST(BadInput, DegreesWhoseProductWrapsOrAnEmptyWorldAreRefused) {
  train::Config config;
  config.n_head = 65536;
  config.d_model = 65536;
  config.n_layer = 1;
  // The int product 65536 × 65536 × 1 wrapped to 0 and matched a world of 0 ranks.
  expect_error(
      [&] {
        check_3d(config, {65536, 65536, 1, 1}, 0, {1, 1, 1});
      },
      "check_3d: the world must have at least 1 rank, got 0");
  expect_error(
      [&] {
        check_3d(config, {65536, 65536, 1, 1}, 1, {1, 1, 1});
      },
      "65536 × 65536 × 1 = 4294967296 is not the 1 ranks");
}

TEST(BadInput, InfiniteAndNanCostsAreRefused) {
  const Schedule s = gpipe_schedule({2, 3, 1});
  const double inf = std::numeric_limits<double>::infinity();
  // An infinite forward made the makespan infinite and bubble_fraction() inf − inf = NaN.
  expect_error(
      [&] {
        simulate(s, {inf, 1, 1, 0});
      },
      {"simulate: costs must be non-negative and finite", "F inf"});
  expect_error([&] { simulate(s, {1, 1, 1, std::nan("")}); }, "comm nan");
  expect_error([&] { simulate(s, {1, -inf, 1, 0}); }, "B -inf");
  // Finite costs whose sum passes the largest double: refused, not an infinite makespan.
  const double big = std::numeric_limits<double>::max() / 2;
  expect_error([&] { simulate(s, {big, big, 0, 0}); }, "add up past the largest double");
  EXPECT_TRUE(std::isfinite(simulate(s, {1, 2, 0, 0.5}).bubble_fraction()));
}

}  // namespace
}  // namespace book::pp
