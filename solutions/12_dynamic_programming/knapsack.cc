#include <algorithm>
#include <climits>
#include <cstdlib>
#include <numeric>

#include "chapters/12_dynamic_programming/contracts.h"
#include "chapters/12_dynamic_programming/knapsack.h"

namespace book::dynprog {

//! [can_partition]
// 0/1 knapsack of feasibility: reachable[c] = some subset of the items so far sums to c. Items
// outer, capacity descending: reachable[c - x] must still describe the subsets WITHOUT item x.
bool can_partition(const std::vector<int>& nums) {
  contract::can_partition(nums);
  const int total = std::accumulate(nums.begin(), nums.end(), 0);
  if (total % 2 != 0) return false;
  std::vector<char> reachable(total / 2 + 1, 0);
  reachable[0] = 1;
  for (int x : nums)
    for (int c = total / 2; c >= x; --c) reachable[c] = reachable[c] || reachable[c - x];
  return reachable[total / 2];
}
//! [can_partition]

// Every smashing order ends as (sum of one side) - (sum of the other), so it is 416's knapsack:
// the heaviest subset not above total/2 is one side; the answer is total - 2 · that.
int last_stone_weight_ii(const std::vector<int>& stones) {
  contract::last_stone_weight_ii(stones);
  const int total = std::accumulate(stones.begin(), stones.end(), 0);
  std::vector<int> best(total / 2 + 1, 0);  // best[c] = heaviest subset sum <= c
  for (int x : stones)
    for (int c = total / 2; c >= x; --c) best[c] = std::max(best[c], best[c - x] + x);
  return total - 2 * best[total / 2];
}

// Plus-set P and minus-set M: P - M = target and P + M = total, so P = (total + target) / 2.
// Counting subsets with that sum is a 0/1 knapsack of ways: ways[c] += ways[c - x], c descending.
int find_target_sum_ways(const std::vector<int>& nums, int target) {
  contract::find_target_sum_ways(nums);
  const int total = std::accumulate(nums.begin(), nums.end(), 0);
  if (std::abs(target) > total || (total + target) % 2 != 0) return 0;
  const int plus = (total + target) / 2;
  std::vector<int> ways(plus + 1, 0);
  ways[0] = 1;
  for (int x : nums)
    for (int c = plus; c >= x; --c) ways[c] += ways[c - x];
  return ways[plus];
}

// A 0/1 knapsack with two capacities: dp[i][j] = largest subset using <= i zeros and <= j ones;
// both capacities descend so each string is taken at most once.
int find_max_form(const std::vector<std::string>& strs, int m, int n) {
  contract::find_max_form(strs, m, n);
  std::vector<std::vector<int>> dp(m + 1, std::vector<int>(n + 1, 0));
  for (const auto& s : strs) {
    const int zeros = static_cast<int>(std::count(s.begin(), s.end(), '0'));
    const int ones = static_cast<int>(s.size()) - zeros;
    for (int i = m; i >= zeros; --i)
      for (int j = n; j >= ones; --j) dp[i][j] = std::max(dp[i][j], dp[i - zeros][j - ones] + 1);
  }
  return dp[m][n];
}

//! [change]
// Unbounded knapsack of ways, coins OUTER: each coin's uses are added in one block, so a multiset
// is counted once, in coin order. Capacity ascends because a coin may be reused.
std::uint64_t change(int amount, const std::vector<int>& coins) {
  contract::change(amount, coins);
  std::vector<std::uint64_t> ways(amount + 1, 0);
  ways[0] = 1;
  for (int coin : coins)
    for (int c = coin; c <= amount; ++c) ways[c] += ways[c - coin];
  return ways[amount];
}
//! [change]

//! [combination_sum4]
// Capacity OUTER: ways[t] = sum over the LAST number x of ways[t - x], so every order of the same
// multiset is a different sequence: permutations.
std::uint64_t combination_sum4(const std::vector<int>& nums, int target) {
  contract::combination_sum4(nums, target);
  std::vector<std::uint64_t> ways(target + 1, 0);
  ways[0] = 1;
  for (int t = 1; t <= target; ++t)
    for (int x : nums)
      if (x <= t) ways[t] += ways[t - x];
  return ways[target];
}
//! [combination_sum4]

// Unbounded knapsack of a minimum: fewest[c] = min over coins of fewest[c - coin] + 1. The order
// of the loops does not matter for a minimum (no counting), only that capacity ascends.
int coin_change(const std::vector<int>& coins, int amount) {
  contract::coin_change(coins, amount);
  const int unreachable = INT_MAX;
  std::vector<int> fewest(amount + 1, unreachable);
  fewest[0] = 0;
  for (int coin : coins)
    for (int c = coin; c <= amount; ++c)
      if (fewest[c - coin] != unreachable) fewest[c] = std::min(fewest[c], fewest[c - coin] + 1);
  return fewest[amount] == unreachable ? -1 : fewest[amount];
}

// 322 with the squares 1, 4, 9, ... <= n as the coins.
int num_squares(int n) {
  contract::num_squares(n);
  std::vector<int> fewest(n + 1, INT_MAX);
  fewest[0] = 0;
  for (int root = 1; root * root <= n; ++root)
    for (int c = root * root; c <= n; ++c)
      fewest[c] = std::min(fewest[c], fewest[c - root * root] + 1);
  return fewest[n];
}

// can[i] = the first i characters split into words = some word w ends at i with can[i - |w|].
// A permutation-style order (capacity outer): the words' order in s matters.
bool word_break(const std::string& s, const std::vector<std::string>& word_dict) {
  std::vector<char> can(s.size() + 1, 0);
  can[0] = 1;
  for (std::size_t i = 1; i <= s.size(); ++i)
    for (const auto& w : word_dict)
      if (w.size() <= i && can[i - w.size()] && s.compare(i - w.size(), w.size(), w) == 0) {
        can[i] = 1;
        break;
      }
  return can[s.size()];
}

}  // namespace book::dynprog
