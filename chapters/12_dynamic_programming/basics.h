/// @file
/// Chapter 12, section Basics: one-dimensional and grid DP, where dp[i] (or dp[i][j]) is read
/// straight off the problem statement. LeetCode signatures in standard C++ types; each function
/// is the exercise `dp.<LeetCode number>`.
#pragma once

#include <cstdint>
#include <vector>

namespace book::dynprog {

/// LeetCode 509, Fibonacci Number: F(0) = 0, F(1) = 1, F(n) = F(n-1) + F(n-2).
/// Requires 0 <= n <= 46 (the answer fits in int).
/// \exercise{dp.509}
int fib(int n);

/// LeetCode 70, Climbing Stairs: the number of ways to climb `n` steps taking 1 or 2 at a time.
/// Requires 1 <= n <= 45 (the answer fits in int).
/// \exercise{dp.70}
int climb_stairs(int n);

/// LeetCode 746, Min Cost Climbing Stairs: paying `cost[i]` to leave step i, then climbing 1 or 2
/// steps, the least total cost to get past the last step, starting on step 0 or step 1.
/// Requires cost.size() >= 2 and 0 <= cost[i] <= 999.
/// \exercise{dp.746}
int min_cost_climbing_stairs(const std::vector<int>& cost);

/// LeetCode 62, Unique Paths: the number of right/down paths from the top-left to the bottom-right
/// corner of an m × n grid. Requires m, n >= 1 and m × n <= 10^7 (the table walks every cell). The
/// count is returned modulo 2^64, so the answer is exact for any grid (LeetCode's inputs never
/// wrap). \exercise{dp.62}
std::uint64_t unique_paths(int m, int n);

/// LeetCode 63, Unique Paths II: as unique_paths(), on `obstacle_grid` where 1 marks a cell no
/// path may enter. Requires a non-empty rectangular grid of 0s and 1s. The count is
/// returned modulo 2^64.
/// \exercise{dp.63}
std::uint64_t unique_paths_with_obstacles(const std::vector<std::vector<int>>& obstacle_grid);

/// LeetCode 64, Minimum Path Sum: the least sum of cells on a right/down path from the top-left to
/// the bottom-right corner. Requires a non-empty rectangular grid of values in
/// [0, 200] with at most 200 × 200 cells.
/// \exercise{dp.64}
int min_path_sum(const std::vector<std::vector<int>>& grid);

/// LeetCode 343, Integer Break: the largest product of at least two positive integers summing to
/// `n`. Requires 2 <= n <= 58.
/// \exercise{dp.343}
int integer_break(int n);

/// LeetCode 96, Unique Binary Search Trees: how many structurally different BSTs store 1..n.
/// Requires 1 <= n <= 19 (the Catalan number fits in int).
/// \exercise{dp.96}
int num_trees(int n);

}  // namespace book::dynprog
