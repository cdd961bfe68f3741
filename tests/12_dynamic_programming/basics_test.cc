#include <algorithm>
#include <climits>
#include <functional>
#include <set>
#include <string>

#include "chapters/12_dynamic_programming/basics.h"
#include "common/testing/exercise.h"
#include "tests/12_dynamic_programming/inputs.h"

namespace book::dynprog {
namespace {

using testing::random_ints;
using testing::show;
using Grid = std::vector<std::vector<int>>;

// Brute force: try a 1-step and a 2-step from every position.
int count_climbs(int n) { return n <= 1 ? 1 : count_climbs(n - 1) + count_climbs(n - 2); }

// Brute force for 746: every sequence of 1- and 2-steps from each start, paying as we leave.
int cheapest_climb(const std::vector<int>& cost, std::size_t at) {
  if (at >= cost.size()) return 0;
  return cost[at] + std::min(cheapest_climb(cost, at + 1), cheapest_climb(cost, at + 2));
}

// Brute force for 62/63/64: walk every right/down path, calling `visit` with its cell sum.
void walk_paths(const Grid& grid, std::size_t i, std::size_t j, int sum,
                const std::function<void(int)>& visit, bool obstacles) {
  if (obstacles && grid[i][j] == 1) return;
  sum += grid[i][j];
  if (i + 1 == grid.size() && j + 1 == grid[0].size()) return visit(sum);
  if (i + 1 < grid.size()) walk_paths(grid, i + 1, j, sum, visit, obstacles);
  if (j + 1 < grid[0].size()) walk_paths(grid, i, j + 1, sum, visit, obstacles);
}

std::uint64_t count_paths(const Grid& grid, bool obstacles) {
  std::uint64_t count = 0;
  walk_paths(
      grid, 0, 0, 0, [&](int) { ++count; }, obstacles);
  return count;
}

// Brute force for 343: every way to write n as a non-increasing sum of >= 2 parts.
int best_product(int remaining, int largest_part, int parts) {
  if (remaining == 0) return parts >= 2 ? 1 : 0;
  int best = 0;
  for (int part = std::min(remaining, largest_part); part >= 1; --part)
    best = std::max(best, part * best_product(remaining - part, part, parts + 1));
  return best;
}

// Brute force for 96: insert every permutation of 1..n into a BST; count the distinct shapes.
std::string bst_shape(const std::vector<int>& order) {
  std::vector<int> left(order.size() + 1, 0), right(order.size() + 1, 0);
  const int root = order[0];
  for (std::size_t k = 1; k < order.size(); ++k) {
    int node = root;
    while (true) {
      int& child = order[k] < node ? left[node] : right[node];
      if (!child) {
        child = order[k];
        break;
      }
      node = child;
    }
  }
  // Keys 1..n in a BST determine the shape with the children table.
  std::string shape;
  for (std::size_t v = 1; v <= order.size(); ++v)
    shape += std::to_string(left[v]) + "," + std::to_string(right[v]) + ";";
  return shape;
}

int count_bst_shapes(int n) {
  std::vector<int> order(n);
  for (int i = 0; i < n; ++i) order[i] = i + 1;
  std::set<std::string> shapes;
  do shapes.insert(bst_shape(order));
  while (std::next_permutation(order.begin(), order.end()));
  return static_cast<int>(shapes.size());
}

EXERCISE_TEST("dp.509", Fibonacci, ExamplesAndEdges) {
  EXPECT_EQ(fib(0), 0);
  EXPECT_EQ(fib(1), 1);
  EXPECT_EQ(fib(2), 1);
  EXPECT_EQ(fib(3), 2);
  EXPECT_EQ(fib(4), 3);
  EXPECT_EQ(fib(30), 832040) << "LeetCode's largest input";
  EXPECT_EQ(fib(46), 1836311903) << "the largest that fits in int";
  for (int n = 2; n <= 25; ++n) EXPECT_EQ(fib(n), count_climbs(n - 1)) << "n = " << n;
}

EXERCISE_TEST("dp.70", ClimbStairs, LeetCodeExamplesAndBruteForce) {
  EXPECT_EQ(climb_stairs(1), 1) << "one step, one way";
  EXPECT_EQ(climb_stairs(2), 2);
  EXPECT_EQ(climb_stairs(3), 3);
  for (int n = 1; n <= 25; ++n) EXPECT_EQ(climb_stairs(n), count_climbs(n)) << "n = " << n;
  EXPECT_EQ(climb_stairs(45), 1836311903) << "n = 45, LeetCode's largest input";
}

EXERCISE_TEST("dp.746", MinCostClimbingStairs, ExamplesAndBruteForce) {
  EXPECT_EQ(min_cost_climbing_stairs({10, 15, 20}), 15);
  EXPECT_EQ(min_cost_climbing_stairs({1, 100, 1, 1, 1, 100, 1, 1, 100, 1}), 6);
  EXPECT_EQ(min_cost_climbing_stairs({7, 3}), 3) << "two steps: start on the cheaper one";
  Rng rng(746);
  for (int trial = 0; trial < 2000; ++trial) {
    const auto cost = random_ints(rng, rng.uniform_int(2, 16), 0, 999);
    const int expected = std::min(cheapest_climb(cost, 0), cheapest_climb(cost, 1));
    ASSERT_EQ(min_cost_climbing_stairs(cost), expected) << "cost = " << show(cost);
  }
}

EXERCISE_TEST("dp.62", UniquePaths, ExamplesAndBruteForce) {
  EXPECT_EQ(unique_paths(3, 7), 28u);
  EXPECT_EQ(unique_paths(3, 2), 3u);
  EXPECT_EQ(unique_paths(1, 1), 1u);
  EXPECT_EQ(unique_paths(1, 100), 1u);
  EXPECT_EQ(unique_paths(100, 1), 1u);
  for (int m = 1; m <= 8; ++m)
    for (int n = 1; n <= 8; ++n)
      EXPECT_EQ(unique_paths(m, n), count_paths(Grid(m, std::vector<int>(n, 0)), false))
          << "m = " << m << ", n = " << n;
  // C(198, 99) overflows 64 bits; Pascal's rule in uint64_t gives it modulo 2^64 independently.
  std::vector<std::uint64_t> row(100, 0);
  row[0] = 1;
  for (int k = 1; k <= 198; ++k)
    for (int j = std::min(k, 99); j >= 1; --j) row[j] += row[j - 1];
  EXPECT_EQ(unique_paths(100, 100), row[99]) << "m = n = 100, count modulo 2^64";
}

EXERCISE_TEST("dp.63", UniquePathsWithObstacles, ExamplesAndBruteForce) {
  EXPECT_EQ(unique_paths_with_obstacles({{0, 0, 0}, {0, 1, 0}, {0, 0, 0}}), 2u);
  EXPECT_EQ(unique_paths_with_obstacles({{0, 1}, {0, 0}}), 1u);
  EXPECT_EQ(unique_paths_with_obstacles({{1}}), 0u) << "blocked start";
  EXPECT_EQ(unique_paths_with_obstacles({{0, 0}, {0, 1}}), 0u) << "blocked finish";
  EXPECT_EQ(unique_paths_with_obstacles({{0}}), 1u);
  Rng rng(63);
  for (int trial = 0; trial < 2000; ++trial) {
    const auto m = rng.uniform_int(1, 6), n = rng.uniform_int(1, 6);
    Grid grid(m);
    for (auto& row : grid) {
      row = random_ints(rng, n, 0, 3);
      for (auto& cell : row) cell = cell == 0 ? 1 : 0;  // a quarter obstacles
    }
    ASSERT_EQ(unique_paths_with_obstacles(grid), count_paths(grid, true))
        << "grid = " << show(grid);
  }
}

EXERCISE_TEST("dp.64", MinPathSum, ExamplesAndBruteForce) {
  EXPECT_EQ(min_path_sum({{1, 3, 1}, {1, 5, 1}, {4, 2, 1}}), 7);
  EXPECT_EQ(min_path_sum({{1, 2, 3}, {4, 5, 6}}), 12);
  EXPECT_EQ(min_path_sum({{5}}), 5);
  Rng rng(64);
  for (int trial = 0; trial < 2000; ++trial) {
    const auto m = rng.uniform_int(1, 6), n = rng.uniform_int(1, 6);
    Grid grid(m);
    for (auto& row : grid) row = random_ints(rng, n, 0, 200);
    int expected = INT_MAX;
    walk_paths(
        grid, 0, 0, 0, [&](int sum) { expected = std::min(expected, sum); }, false);
    ASSERT_EQ(min_path_sum(grid), expected) << "grid = " << show(grid);
  }
}

EXERCISE_TEST("dp.343", IntegerBreak, ExamplesAndBruteForce) {
  EXPECT_EQ(integer_break(2), 1);
  EXPECT_EQ(integer_break(10), 36);
  for (int n = 2; n <= 30; ++n) EXPECT_EQ(integer_break(n), best_product(n, n, 0)) << "n = " << n;
  EXPECT_EQ(integer_break(58), 1549681956) << "3^18 · 2^2, LeetCode's largest input";
}

EXERCISE_TEST("dp.96", UniqueBinarySearchTrees, ExamplesAndBruteForce) {
  EXPECT_EQ(num_trees(3), 5);
  EXPECT_EQ(num_trees(1), 1);
  for (int n = 1; n <= 8; ++n) EXPECT_EQ(num_trees(n), count_bst_shapes(n)) << "n = " << n;
  EXPECT_EQ(num_trees(19), 1767263190) << "the Catalan number C(19), LeetCode's largest input";
}

}  // namespace
}  // namespace book::dynprog
