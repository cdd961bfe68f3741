#include "chapters/12_dynamic_programming/dp.h"
#include "common/testing/exercise.h"

namespace book::dp {
namespace {

// Brute force: try a 1-step and a 2-step from every position.
int count_climbs(int n) { return n <= 1 ? 1 : count_climbs(n - 1) + count_climbs(n - 2); }

EXERCISE_TEST("dp.70", ClimbStairs, LeetCodeExamplesAndBruteForce) {
  EXPECT_EQ(climb_stairs(2), 2);
  EXPECT_EQ(climb_stairs(3), 3);
  for (int n = 1; n <= 25; ++n) EXPECT_EQ(climb_stairs(n), count_climbs(n)) << "n = " << n;
  EXPECT_EQ(climb_stairs(45), 1836311903) << "n = 45, LeetCode's largest input";
}

}  // namespace
}  // namespace book::dp
