#include <algorithm>
#include <climits>
#include <numeric>
#include <regex>
#include <string>

#include "chapters/12_dynamic_programming/classics.h"
#include "common/testing/exercise.h"
#include "tests/12_dynamic_programming/inputs.h"

namespace book::dynprog {
namespace {

using testing::random_ints;
using testing::random_string;
using testing::show;

std::string quoted(const std::string& s, const std::string& p) {
  return "s = \"" + s + "\", p = \"" + p + "\"";
}

// A random LeetCode 10 pattern: letters, '.', and '*' only after a letter or '.'.
std::string random_regex(Rng& rng) {
  std::string p;
  const auto length = rng.uniform_int(0, 6);
  for (int i = 0; i < length; ++i) {
    const double r = rng.uniform();
    if (r < 0.3 && !p.empty() && p.back() != '*')
      p += '*';
    else
      p += r < 0.5 ? '.' : static_cast<char>('a' + rng.uniform_int(0, 1));
  }
  return p;
}

// Brute force for 887: the direct minimax over the first drop, memoised only to keep the test
// fast — O(k n^2), the textbook first DP. worst[e][f] = drops needed for f floors with e eggs.
int egg_drop_minimax(int k, int n) {
  std::vector<std::vector<int>> worst(k + 1, std::vector<int>(n + 1, 0));
  for (int f = 1; f <= n; ++f) worst[1][f] = f;
  for (int e = 2; e <= k; ++e)
    for (int f = 1; f <= n; ++f) {
      worst[e][f] = INT_MAX;
      for (int x = 1; x <= f; ++x)
        worst[e][f] = std::min(worst[e][f], 1 + std::max(worst[e - 1][x - 1], worst[e][f - x]));
    }
  return worst[k][n];
}

EXERCISE_TEST("dp.10", RegularExpressionMatching, ExamplesAndStdRegex) {
  EXPECT_FALSE(is_match_regex("aa", "a"));
  EXPECT_TRUE(is_match_regex("aa", "a*"));
  EXPECT_TRUE(is_match_regex("ab", ".*"));
  EXPECT_TRUE(is_match_regex("aab", "c*a*b"));
  EXPECT_FALSE(is_match_regex("mississippi", "mis*is*p*."));
  EXPECT_TRUE(is_match_regex("", "a*b*")) << "stars may match nothing";
  EXPECT_TRUE(is_match_regex("", ""));
  Rng rng(10);
  for (int trial = 0; trial < 3000; ++trial) {
    const auto s = random_string(rng, rng.uniform_int(0, 6), 2);
    const auto p = random_regex(rng);
    // LeetCode's syntax is a subset of ECMAScript regular expressions with the same meaning.
    const bool expected = std::regex_match(s, std::regex(p));
    ASSERT_EQ(is_match_regex(s, p), expected) << quoted(s, p);
  }
}

EXERCISE_TEST("dp.44", WildcardMatching, ExamplesAndStdRegex) {
  EXPECT_FALSE(is_match_wildcard("aa", "a"));
  EXPECT_TRUE(is_match_wildcard("aa", "*"));
  EXPECT_FALSE(is_match_wildcard("cb", "?a"));
  EXPECT_TRUE(is_match_wildcard("adceb", "*a*b"));
  EXPECT_FALSE(is_match_wildcard("acdcb", "a*c?b"));
  EXPECT_TRUE(is_match_wildcard("", "***"));
  EXPECT_FALSE(is_match_wildcard("", "?"));
  Rng rng(44);
  for (int trial = 0; trial < 3000; ++trial) {
    const auto s = random_string(rng, rng.uniform_int(0, 7), 2);
    std::string p, as_regex;
    for (int i = rng.uniform_int(0, 6); i > 0; --i) {
      const double r = rng.uniform();
      const char c = r < 0.25   ? '*'
                     : r < 0.45 ? '?'
                                : static_cast<char>('a' + rng.uniform_int(0, 1));
      p += c;
      as_regex += c == '*' ? ".*" : c == '?' ? "." : std::string(1, c);
    }
    ASSERT_EQ(is_match_wildcard(s, p), std::regex_match(s, std::regex(as_regex))) << quoted(s, p);
  }
}

EXERCISE_TEST("dp.887", SuperEggDrop, ExamplesAndMinimax) {
  EXPECT_EQ(super_egg_drop(1, 2), 2);
  EXPECT_EQ(super_egg_drop(2, 6), 3);
  EXPECT_EQ(super_egg_drop(3, 14), 4);
  EXPECT_EQ(super_egg_drop(1, 1), 1);
  EXPECT_EQ(super_egg_drop(2, 100), 14) << "the classic two eggs, 100 floors";
  EXPECT_EQ(super_egg_drop(100, 10000), 14) << "many eggs: binary search, ceil(log2(10001))";
  EXPECT_EQ(super_egg_drop(1, 10000), 10000) << "one egg: floor by floor";
  for (int k = 1; k <= 5; ++k)
    for (int n = 1; n <= 120; ++n)
      ASSERT_EQ(super_egg_drop(k, n), egg_drop_minimax(k, n)) << "k = " << k << ", n = " << n;
}

EXERCISE_TEST("dp.1235", JobScheduling, ExamplesAndBruteForce) {
  EXPECT_EQ(job_scheduling({1, 2, 3, 3}, {3, 4, 5, 6}, {50, 10, 40, 70}), 120);
  EXPECT_EQ(job_scheduling({1, 2, 3, 4, 6}, {3, 5, 10, 6, 9}, {20, 20, 100, 70, 60}), 150);
  EXPECT_EQ(job_scheduling({1, 1, 1}, {2, 3, 4}, {5, 6, 4}), 6);
  EXPECT_EQ(job_scheduling({1}, {2}, {9}), 9);
  Rng rng(1235);
  for (int trial = 0; trial < 2000; ++trial) {
    const auto n = rng.uniform_int(1, 11);
    std::vector<int> start(n), end(n), profit(n);
    for (int i = 0; i < n; ++i) {
      start[i] = static_cast<int>(rng.uniform_int(1, 10));
      end[i] = start[i] + static_cast<int>(rng.uniform_int(1, 5));
      profit[i] = static_cast<int>(rng.uniform_int(1, 50));
    }
    int expected = 0;
    for (std::uint32_t mask = 0; mask < (1u << n); ++mask) {
      bool compatible = true;
      int sum = 0;
      for (int i = 0; i < n && compatible; ++i) {
        if (!(mask >> i & 1)) continue;
        sum += profit[i];
        for (int j = 0; j < i && compatible; ++j)
          if (mask >> j & 1) compatible = end[i] <= start[j] || end[j] <= start[i];
      }
      if (compatible) expected = std::max(expected, sum);
    }
    ASSERT_EQ(job_scheduling(start, end, profit), expected)
        << "start = " << show(start) << ", end = " << show(end) << ", profit = " << show(profit);
  }
}

EXERCISE_TEST("dp.410", SplitArrayLargestSum, ExamplesAndBruteForce) {
  EXPECT_EQ(split_array({7, 2, 5, 10, 8}, 2), 18);
  EXPECT_EQ(split_array({1, 2, 3, 4, 5}, 2), 9);
  EXPECT_EQ(split_array({1, 4, 4}, 3), 4);
  EXPECT_EQ(split_array({0, 0, 5}, 3), 5) << "zeros: parts may sum to 0";
  EXPECT_EQ(split_array({6}, 1), 6);
  Rng rng(410);
  for (int trial = 0; trial < 2000; ++trial) {
    const auto nums = random_ints(rng, rng.uniform_int(1, 10), 0, 20);
    const int k = static_cast<int>(rng.uniform_int(1, nums.size()));
    // Every choice of k-1 cut positions among the n-1 gaps.
    int expected = INT_MAX;
    const int gaps = static_cast<int>(nums.size()) - 1;
    for (std::uint32_t cuts = 0; cuts < (1u << gaps); ++cuts) {
      if (std::popcount(cuts) != k - 1) continue;
      int largest = 0, part = 0;
      for (int i = 0; i <= gaps; ++i) {
        part += nums[i];
        if (i == gaps || (cuts >> i & 1)) largest = std::max(largest, part), part = 0;
      }
      expected = std::min(expected, largest);
    }
    ASSERT_EQ(split_array(nums, k), expected) << "nums = " << show(nums) << ", k = " << k;
  }
}

}  // namespace
}  // namespace book::dynprog
