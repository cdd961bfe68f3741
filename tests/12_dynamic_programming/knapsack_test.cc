#include <algorithm>
#include <climits>
#include <cstdlib>
#include <functional>
#include <set>
#include <string>

#include "chapters/12_dynamic_programming/brute_force.h"
#include "chapters/12_dynamic_programming/knapsack.h"
#include "common/testing/exercise.h"
#include "tests/12_dynamic_programming/inputs.h"

namespace book::dynprog {
namespace {

using testing::random_ints;
using testing::random_string;
using testing::show;

// Distinct positive values, `count` of them in [1, hi].
std::vector<int> distinct_positive(Rng& rng, int count, int hi) {
  std::set<int> chosen;
  while (static_cast<int>(chosen.size()) < count)
    chosen.insert(static_cast<int>(rng.uniform_int(1, hi)));
  std::vector<int> out(chosen.begin(), chosen.end());
  // Shuffle so no solution may rely on sorted input.
  for (std::size_t i = out.size(); i > 1; --i)
    std::swap(out[i - 1], out[rng.uniform_int(0, i - 1)]);
  return out;
}

// Brute force for 1049: smash every pair in every order.
int smash_all(std::vector<int> stones) {
  if (stones.size() <= 1) return stones.empty() ? 0 : stones[0];
  int best = INT_MAX;
  for (std::size_t i = 0; i < stones.size(); ++i)
    for (std::size_t j = i + 1; j < stones.size(); ++j) {
      std::vector<int> rest;
      for (std::size_t k = 0; k < stones.size(); ++k)
        if (k != i && k != j) rest.push_back(stones[k]);
      if (stones[i] != stones[j]) rest.push_back(std::abs(stones[i] - stones[j]));
      best = std::min(best, smash_all(rest));
    }
  return best;
}

// Brute force for 518: multisets as non-decreasing sequences of coin indices.
std::uint64_t count_combinations(const std::vector<int>& coins, int amount, std::size_t from) {
  if (amount == 0) return 1;
  std::uint64_t count = 0;
  for (std::size_t c = from; c < coins.size(); ++c)
    if (coins[c] <= amount) count += count_combinations(coins, amount - coins[c], c);
  return count;
}

// Brute force for 377: every sequence.
std::uint64_t count_sequences(const std::vector<int>& nums, int target) {
  if (target == 0) return 1;
  std::uint64_t count = 0;
  for (int x : nums)
    if (x <= target) count += count_sequences(nums, target - x);
  return count;
}

// Brute force for 279: plain recursion over the largest square used next.
int fewest_squares(int n) {
  if (n == 0) return 0;
  int best = INT_MAX;
  for (int root = 1; root * root <= n; ++root)
    best = std::min(best, 1 + fewest_squares(n - root * root));
  return best;
}

// Brute force for 139: every way to cut s into pieces (2^(n-1) cut sets).
bool splits_into_words(const std::string& s, const std::vector<std::string>& dict) {
  if (s.empty()) return true;
  const std::set<std::string> words(dict.begin(), dict.end());
  for (std::uint32_t cuts = 0; cuts < (1u << (s.size() - 1)); ++cuts) {
    bool all_words = true;
    std::size_t start = 0;
    for (std::size_t i = 1; i <= s.size() && all_words; ++i)
      if (i == s.size() || (cuts >> (i - 1) & 1)) {
        all_words = words.count(s.substr(start, i - start)) > 0;
        start = i;
      }
    if (all_words) return true;
  }
  return false;
}

EXERCISE_TEST("dp.416", PartitionEqualSubsetSum, ExamplesAndBruteForce) {
  EXPECT_TRUE(can_partition({1, 5, 11, 5}));
  EXPECT_FALSE(can_partition({1, 2, 3, 5}));
  EXPECT_FALSE(can_partition({7})) << "one element";
  EXPECT_TRUE(can_partition({100, 100}));
  EXPECT_FALSE(can_partition({2, 2, 3, 5})) << "even total, still impossible";
  Rng rng(416);
  for (int trial = 0; trial < 3000; ++trial) {
    const auto nums = random_ints(rng, rng.uniform_int(1, 12), 1, rng.uniform_int(1, 100));
    ASSERT_EQ(can_partition(nums), brute::can_partition(nums)) << "nums = " << show(nums);
  }
  EXPECT_TRUE(can_partition(std::vector<int>(200, 100))) << "200 × 100, LeetCode's maximum";
}

EXERCISE_TEST("dp.1049", LastStoneWeightII, ExamplesAndBruteForce) {
  EXPECT_EQ(last_stone_weight_ii({2, 7, 4, 1, 8, 1}), 1);
  EXPECT_EQ(last_stone_weight_ii({31, 26, 33, 21, 40}), 5);
  EXPECT_EQ(last_stone_weight_ii({9}), 9) << "one stone is left as it is";
  Rng rng(1049);
  for (int trial = 0; trial < 1000; ++trial) {
    const auto stones = random_ints(rng, rng.uniform_int(1, 6), 1, 30);
    ASSERT_EQ(last_stone_weight_ii(stones), smash_all(stones)) << "stones = " << show(stones);
  }
}

EXERCISE_TEST("dp.494", TargetSum, ExamplesAndBruteForce) {
  EXPECT_EQ(find_target_sum_ways({1, 1, 1, 1, 1}, 3), 5);
  EXPECT_EQ(find_target_sum_ways({1}, 1), 1);
  EXPECT_EQ(find_target_sum_ways({1}, 2), 0) << "target beyond the total";
  EXPECT_EQ(find_target_sum_ways({0, 0, 1}, 1), 4) << "each zero doubles the count";
  EXPECT_EQ(find_target_sum_ways({1, 2}, -1), 1) << "negative target";
  Rng rng(494);
  for (int trial = 0; trial < 2000; ++trial) {
    const auto nums = random_ints(rng, rng.uniform_int(1, 12), 0, 8);
    const int target = static_cast<int>(rng.uniform_int(-20, 20));
    int expected = 0;
    for (std::uint32_t signs = 0; signs < (1u << nums.size()); ++signs) {
      int sum = 0;
      for (std::size_t i = 0; i < nums.size(); ++i) sum += (signs >> i & 1) ? nums[i] : -nums[i];
      expected += sum == target;
    }
    ASSERT_EQ(find_target_sum_ways(nums, target), expected)
        << "nums = " << show(nums) << ", target = " << target;
  }
}

EXERCISE_TEST("dp.474", OnesAndZeroes, ExamplesAndBruteForce) {
  EXPECT_EQ(find_max_form({"10", "0001", "111001", "1", "0"}, 5, 3), 4);
  EXPECT_EQ(find_max_form({"10", "0", "1"}, 1, 1), 2);
  EXPECT_EQ(find_max_form({"00", "11"}, 0, 0), 0) << "no budget";
  Rng rng(474);
  for (int trial = 0; trial < 1000; ++trial) {
    std::vector<std::string> strs(rng.uniform_int(1, 10));
    for (auto& s : strs) {
      s = random_string(rng, rng.uniform_int(1, 4), 2);
      for (auto& c : s) c = c == 'a' ? '0' : '1';
    }
    const int m = static_cast<int>(rng.uniform_int(0, 6)),
              n = static_cast<int>(rng.uniform_int(0, 6));
    int expected = 0;
    for (std::uint32_t mask = 0; mask < (1u << strs.size()); ++mask) {
      int zeros = 0, ones = 0;
      for (std::size_t i = 0; i < strs.size(); ++i)
        if (mask >> i & 1)
          for (char c : strs[i]) (c == '0' ? zeros : ones)++;
      if (zeros <= m && ones <= n) expected = std::max(expected, std::popcount(mask));
    }
    ASSERT_EQ(find_max_form(strs, m, n), expected)
        << "strs = " << show(strs) << ", m = " << m << ", n = " << n;
  }
}

EXERCISE_TEST("dp.518", CoinChangeII, ExamplesAndBruteForce) {
  EXPECT_EQ(change(5, {1, 2, 5}), 4u);
  EXPECT_EQ(change(3, {2}), 0u);
  EXPECT_EQ(change(10, {10}), 1u);
  EXPECT_EQ(change(0, {7}), 1u) << "the empty combination";
  Rng rng(518);
  for (int trial = 0; trial < 2000; ++trial) {
    const auto coins = distinct_positive(rng, static_cast<int>(rng.uniform_int(1, 4)), 12);
    const int amount = static_cast<int>(rng.uniform_int(0, 30));
    ASSERT_EQ(change(amount, coins), count_combinations(coins, amount, 0))
        << "amount = " << amount << ", coins = " << show(coins);
  }
}

EXERCISE_TEST("dp.377", CombinationSumIV, ExamplesAndBruteForce) {
  EXPECT_EQ(combination_sum4({1, 2, 3}, 4), 7u);
  EXPECT_EQ(combination_sum4({9}, 3), 0u);
  Rng rng(377);
  for (int trial = 0; trial < 2000; ++trial) {
    const auto nums = distinct_positive(rng, static_cast<int>(rng.uniform_int(1, 4)), 10);
    const int target = static_cast<int>(rng.uniform_int(1, 18));
    ASSERT_EQ(combination_sum4(nums, target), count_sequences(nums, target))
        << "nums = " << show(nums) << ", target = " << target;
  }
  // With {1, 2} the count is Fibonacci: F(91) ≈ 4.7e18 still fits 64 bits; the int of LeetCode's
  // signature overflows by target 46.
  std::uint64_t a = 1, b = 1;
  for (int t = 2; t <= 90; ++t) std::swap(a, b), b += a;
  EXPECT_EQ(combination_sum4({2, 1}, 90), b) << "target 90 with {1, 2}: a Fibonacci number";
}

//! [wrong_order]
// The loop-order rule, shown with the wrong order written out: the same update, capacity OUTER,
// counts sequences (permutations), not combinations.
std::uint64_t change_with_capacity_outer(int amount, const std::vector<int>& coins) {
  std::vector<std::uint64_t> ways(amount + 1, 0);
  ways[0] = 1;
  for (int c = 1; c <= amount; ++c)
    for (int coin : coins)
      if (coin <= c) ways[c] += ways[c - coin];
  return ways[amount];
}
//! [wrong_order]

// And 0/1 knapsack with capacity ASCENDING reuses items (it is the unbounded knapsack).
bool partition_with_capacity_ascending(const std::vector<int>& nums) {
  int total = 0;
  for (int x : nums) total += x;
  if (total % 2) return false;
  std::vector<char> reachable(total / 2 + 1, 0);
  reachable[0] = 1;
  for (int x : nums)
    for (int c = x; c <= total / 2; ++c) reachable[c] = reachable[c] || reachable[c - x];
  return reachable[total / 2];
}

EXERCISE_TEST("dp.518", LoopOrder, CapacityOuterCountsPermutationsNotCombinations) {
  // amount 5, coins {1, 2, 5}: 4 combinations but 9 ordered sequences.
  EXPECT_EQ(change(5, {1, 2, 5}), 4u);
  EXPECT_EQ(change_with_capacity_outer(5, {1, 2, 5}), 9u) << "the wrong order counts sequences";
  EXPECT_EQ(change_with_capacity_outer(5, {1, 2, 5}), combination_sum4({1, 2, 5}, 5))
      << "capacity outer is exactly 377's recurrence";
}

EXERCISE_TEST("dp.416", LoopOrder, CapacityAscendingReusesItems) {
  // {1, 5}: total 6, half 3. Each item once cannot make 3; capacity ascending lets the 1 be used
  // three times (reachable[1] -> [2] -> [3] within the same item's pass).
  EXPECT_FALSE(can_partition({1, 5}));
  EXPECT_TRUE(partition_with_capacity_ascending({1, 5}))
      << "the wrong order uses the 1 three times";
  EXPECT_EQ(can_partition({1, 5}), brute::can_partition({1, 5}));
}

EXERCISE_TEST("dp.322", CoinChange, ExamplesAndBruteForce) {
  EXPECT_EQ(coin_change({1, 2, 5}, 11), 3);
  EXPECT_EQ(coin_change({2}, 3), -1) << "impossible";
  EXPECT_EQ(coin_change({1}, 0), 0) << "amount 0 needs no coin";
  EXPECT_EQ(coin_change({186, 419, 83, 408}, 6249), 20) << "a LeetCode example where greedy fails";
  Rng rng(322);
  for (int trial = 0; trial < 2000; ++trial) {
    const auto coins = distinct_positive(rng, static_cast<int>(rng.uniform_int(1, 4)), 12);
    const int amount = static_cast<int>(rng.uniform_int(0, 24));
    ASSERT_EQ(coin_change(coins, amount), brute::coin_change(coins, amount))
        << "coins = " << show(coins) << ", amount = " << amount;
  }
}

EXERCISE_TEST("dp.279", PerfectSquares, ExamplesAndBruteForce) {
  EXPECT_EQ(num_squares(12), 3);
  EXPECT_EQ(num_squares(13), 2);
  EXPECT_EQ(num_squares(1), 1);
  for (int n = 1; n <= 40; ++n) EXPECT_EQ(num_squares(n), fewest_squares(n)) << "n = " << n;
  EXPECT_EQ(num_squares(7168), 4) << "4^a(8b+7) needs four squares (Legendre), LeetCode's range";
}

EXERCISE_TEST("dp.139", WordBreak, ExamplesAndBruteForce) {
  EXPECT_TRUE(word_break("leetcode", {"leet", "code"}));
  EXPECT_TRUE(word_break("applepenapple", {"apple", "pen"}));
  EXPECT_FALSE(word_break("catsandog", {"cats", "dog", "sand", "and", "cat"}));
  EXPECT_TRUE(word_break("", {"a"})) << "the empty string is the empty concatenation";
  Rng rng(139);
  for (int trial = 0; trial < 2000; ++trial) {
    const std::string s = random_string(rng, rng.uniform_int(1, 12), 2);
    std::vector<std::string> dict(rng.uniform_int(1, 4));
    for (auto& w : dict) w = random_string(rng, rng.uniform_int(1, 3), 2);
    ASSERT_EQ(word_break(s, dict), splits_into_words(s, dict))
        << "s = \"" << s << "\", dict = " << show(dict);
  }
}

}  // namespace
}  // namespace book::dynprog
