#include <algorithm>

#include "chapters/12_dynamic_programming/basics.h"
#include "chapters/12_dynamic_programming/contracts.h"

namespace book::dynprog {

// dp[i] = F(i); each step reads only the two before it, so two variables replace the table.
int fib(int n) {
  contract::fib(n);
  int before = 0, last = 1;  // F(0), F(1)
  if (n == 0) return 0;
  for (int i = 2; i <= n; ++i) {
    const int next = last + before;
    before = last;
    last = next;
  }
  return last;
}

// dp[i] = ways to reach step i = dp[i-1] + dp[i-2]; only the last two are ever read.
int climb_stairs(int n) {
  contract::climb_stairs(n);
  int before = 1, last = 1;  // dp[0], dp[1]
  for (int i = 2; i <= n; ++i) {
    const int next = last + before;
    before = last;
    last = next;
  }
  return last;
}

// dp[i] = least cost to stand on step i = min(dp[i-1] + cost[i-1], dp[i-2] + cost[i-2]);
// dp[0] = dp[1] = 0 (either may be the start); the answer is dp[n], the top past the last step.
int min_cost_climbing_stairs(const std::vector<int>& cost) {
  contract::min_cost_climbing_stairs(cost);
  int before = 0, last = 0;  // dp[i-2], dp[i-1]
  for (std::size_t i = 2; i <= cost.size(); ++i) {
    const int next = std::min(last + cost[i - 1], before + cost[i - 2]);
    before = last;
    last = next;
  }
  return last;
}

// dp[i][j] = paths to (i, j) = dp[i-1][j] + dp[i][j-1]; a row at a time, left to right, so dp[j]
// still holds the row above when it is read and dp[j-1] already holds this row.
std::uint64_t unique_paths(int m, int n) {
  contract::unique_paths(m, n);
  std::vector<std::uint64_t> dp(n, 1);  // the first row: one path to each cell
  for (int i = 1; i < m; ++i)
    for (int j = 1; j < n; ++j) dp[j] += dp[j - 1];
  return dp[n - 1];
}

// As unique_paths(), with dp = 0 on an obstacle (no path ends there, so none continues from it).
std::uint64_t unique_paths_with_obstacles(const std::vector<std::vector<int>>& grid) {
  contract::unique_paths_with_obstacles(grid);
  const std::size_t n = grid[0].size();
  std::vector<std::uint64_t> dp(n, 0);
  dp[0] = 1;  // a virtual path entering the top-left cell; an obstacle there zeroes it below
  for (const auto& row : grid)
    for (std::size_t j = 0; j < n; ++j) {
      if (row[j] == 1)
        dp[j] = 0;
      else if (j > 0)
        dp[j] += dp[j - 1];
    }
  return dp[n - 1];
}

// dp[i][j] = least sum of a path to (i, j) = grid[i][j] + min(dp[i-1][j], dp[i][j-1]).
int min_path_sum(const std::vector<std::vector<int>>& grid) {
  contract::min_path_sum(grid);
  const std::size_t n = grid[0].size();
  std::vector<int> dp(n);
  for (std::size_t i = 0; i < grid.size(); ++i)
    for (std::size_t j = 0; j < n; ++j) {
      if (i == 0 && j == 0)
        dp[j] = grid[0][0];
      else if (i == 0)
        dp[j] = dp[j - 1] + grid[i][j];
      else if (j == 0)
        dp[j] = dp[j] + grid[i][j];
      else
        dp[j] = std::min(dp[j], dp[j - 1]) + grid[i][j];
    }
  return dp[n - 1];
}

// dp[i] = best product of a break of i into >= 2 parts: first part j, then the rest i-j either
// kept whole (j · (i-j)) or broken further (j · dp[i-j]).
int integer_break(int n) {
  contract::integer_break(n);
  std::vector<int> dp(n + 1, 0);
  for (int i = 2; i <= n; ++i)
    for (int j = 1; j < i; ++j) dp[i] = std::max({dp[i], j * (i - j), j * dp[i - j]});
  return dp[n];
}

// dp[i] = BSTs on i keys = sum over the root r of dp[r-1] · dp[i-r] (left and right subtrees).
int num_trees(int n) {
  contract::num_trees(n);
  std::vector<long long> dp(n + 1, 0);
  dp[0] = 1;
  for (int i = 1; i <= n; ++i)
    for (int root = 1; root <= i; ++root) dp[i] += dp[root - 1] * dp[i - root];
  return static_cast<int>(dp[n]);
}

}  // namespace book::dynprog
