#include <algorithm>
#include <climits>
#include <string>

#include "chapters/12_dynamic_programming/brute_force.h"
#include "chapters/12_dynamic_programming/subsequences.h"
#include "common/testing/exercise.h"
#include "tests/12_dynamic_programming/inputs.h"

namespace book::dynprog {
namespace {

using testing::random_ints;
using testing::random_string;
using testing::show;

std::string as_letters(const std::vector<int>& values) {
  std::string out;
  for (int v : values) out += static_cast<char>('a' + v);
  return out;
}

EXERCISE_TEST("dp.300", LongestIncreasingSubsequence, ExamplesAndBruteForce) {
  EXPECT_EQ(length_of_lis({10, 9, 2, 5, 3, 7, 101, 18}), 4);
  EXPECT_EQ(length_of_lis({0, 1, 0, 3, 2, 3}), 4);
  EXPECT_EQ(length_of_lis({7, 7, 7, 7, 7, 7, 7}), 1)
      << "strictly increasing: equal values do not count";
  EXPECT_EQ(length_of_lis({}), 0);
  EXPECT_EQ(length_of_lis({-5}), 1);
  Rng rng(300);
  for (int trial = 0; trial < 3000; ++trial) {
    const auto nums = random_ints(rng, rng.uniform_int(0, 14), -5, rng.uniform_int(-4, 20));
    ASSERT_EQ(length_of_lis(nums), brute::length_of_lis(nums)) << "nums = " << show(nums);
  }
  std::vector<int> rising(2500);
  for (int i = 0; i < 2500; ++i) rising[i] = i * 2 - 2500;
  EXPECT_EQ(length_of_lis(rising), 2500) << "2500 increasing values, LeetCode's maximum length";
}

EXERCISE_TEST("dp.354", RussianDollEnvelopes, ExamplesAndBruteForce) {
  EXPECT_EQ(max_envelopes({{5, 4}, {6, 4}, {6, 7}, {2, 3}}), 3);
  EXPECT_EQ(max_envelopes({{1, 1}, {1, 1}, {1, 1}}), 1);
  EXPECT_EQ(max_envelopes({{4, 5}, {4, 6}, {6, 7}, {2, 3}, {1, 1}}), 4)
      << "equal widths never nest";
  Rng rng(354);
  for (int trial = 0; trial < 2000; ++trial) {
    std::vector<std::vector<int>> envelopes(rng.uniform_int(1, 10));
    for (auto& e : envelopes) e = random_ints(rng, 2, 1, 6);
    int expected = 0;
    for (std::uint32_t mask = 1; mask < (1u << envelopes.size()); ++mask) {
      std::vector<std::vector<int>> chosen;
      for (std::size_t i = 0; i < envelopes.size(); ++i)
        if (mask >> i & 1) chosen.push_back(envelopes[i]);
      std::sort(chosen.begin(), chosen.end());
      bool nests = true;
      for (std::size_t i = 1; i < chosen.size(); ++i)
        nests = nests && chosen[i - 1][0] < chosen[i][0] && chosen[i - 1][1] < chosen[i][1];
      if (nests) expected = std::max(expected, static_cast<int>(chosen.size()));
    }
    ASSERT_EQ(max_envelopes(envelopes), expected) << "envelopes = " << show(envelopes);
  }
}

EXERCISE_TEST("dp.674", LongestContinuousIncreasing, ExamplesAndBruteForce) {
  EXPECT_EQ(find_length_of_lcis({1, 3, 5, 4, 7}), 3);
  EXPECT_EQ(find_length_of_lcis({2, 2, 2, 2, 2}), 1);
  EXPECT_EQ(find_length_of_lcis({}), 0);
  EXPECT_EQ(find_length_of_lcis({5, 1, 2, 3, 4}), 4) << "the answer is not where the input starts";
  Rng rng(674);
  for (int trial = 0; trial < 3000; ++trial) {
    const auto nums = random_ints(rng, rng.uniform_int(0, 14), -3, 6);
    int expected = 0;
    for (std::size_t i = 0; i < nums.size(); ++i)
      for (std::size_t j = i; j < nums.size(); ++j) {
        bool rising = true;
        for (std::size_t k = i + 1; k <= j; ++k) rising = rising && nums[k] > nums[k - 1];
        if (rising) expected = std::max(expected, static_cast<int>(j - i + 1));
      }
    ASSERT_EQ(find_length_of_lcis(nums), expected) << "nums = " << show(nums);
  }
}

EXERCISE_TEST("dp.718", MaximumLengthOfRepeatedSubarray, ExamplesAndBruteForce) {
  EXPECT_EQ(find_length({1, 2, 3, 2, 1}, {3, 2, 1, 4, 7}), 3);
  EXPECT_EQ(find_length({0, 0, 0, 0, 0}, {0, 0, 0, 0, 0}), 5);
  EXPECT_EQ(find_length({1, 2}, {3, 4}), 0);
  EXPECT_EQ(find_length({5, 1, 2}, {1, 2, 9}), 2) << "the best run ends before the last cell";
  Rng rng(718);
  for (int trial = 0; trial < 2000; ++trial) {
    const auto a = random_ints(rng, rng.uniform_int(1, 10), 0, 2),
               b = random_ints(rng, rng.uniform_int(1, 10), 0, 2);
    int expected = 0;
    for (std::size_t i = 0; i < a.size(); ++i)
      for (std::size_t j = 0; j < b.size(); ++j) {
        int run = 0;
        while (i + run < a.size() && j + run < b.size() && a[i + run] == b[j + run]) ++run;
        expected = std::max(expected, run);
      }
    ASSERT_EQ(find_length(a, b), expected) << "nums1 = " << show(a) << ", nums2 = " << show(b);
  }
}

EXERCISE_TEST("dp.1143", LongestCommonSubsequence, ExamplesAndBruteForce) {
  EXPECT_EQ(longest_common_subsequence("abcde", "ace"), 3);
  EXPECT_EQ(longest_common_subsequence("abc", "abc"), 3);
  EXPECT_EQ(longest_common_subsequence("abc", "def"), 0);
  EXPECT_EQ(longest_common_subsequence("", "abc"), 0);
  Rng rng(1143);
  for (int trial = 0; trial < 2000; ++trial) {
    const auto a = random_string(rng, rng.uniform_int(0, 12), 3),
               b = random_string(rng, rng.uniform_int(0, 12), 3);
    ASSERT_EQ(longest_common_subsequence(a, b), brute::longest_common_subsequence(a, b))
        << "text1 = \"" << a << "\", text2 = \"" << b << "\"";
  }
}

EXERCISE_TEST("dp.1035", UncrossedLines, ExamplesAndBruteForce) {
  EXPECT_EQ(max_uncrossed_lines({1, 4, 2}, {1, 2, 4}), 2);
  EXPECT_EQ(max_uncrossed_lines({2, 5, 1, 2, 5}, {10, 5, 2, 1, 5, 2}), 3);
  EXPECT_EQ(max_uncrossed_lines({1, 3, 7, 1, 7, 5}, {1, 9, 2, 5, 1}), 2);
  Rng rng(1035);
  for (int trial = 0; trial < 2000; ++trial) {
    const auto a = random_ints(rng, rng.uniform_int(1, 11), 0, 3),
               b = random_ints(rng, rng.uniform_int(1, 11), 0, 3);
    ASSERT_EQ(max_uncrossed_lines(a, b),
              brute::longest_common_subsequence(as_letters(a), as_letters(b)))
        << "nums1 = " << show(a) << ", nums2 = " << show(b);
  }
}

EXERCISE_TEST("dp.53", MaximumSubarray, ExamplesAndBruteForce) {
  EXPECT_EQ(max_sub_array({-2, 1, -3, 4, -1, 2, 1, -5, 4}), 6);
  EXPECT_EQ(max_sub_array({1}), 1);
  EXPECT_EQ(max_sub_array({5, 4, -1, 7, 8}), 23);
  EXPECT_EQ(max_sub_array({-3, -1, -2}), -1) << "all negative: the best single element";
  Rng rng(53);
  for (int trial = 0; trial < 3000; ++trial) {
    const auto nums = random_ints(rng, rng.uniform_int(1, 14), -10, 10);
    int expected = INT_MIN;
    for (std::size_t i = 0; i < nums.size(); ++i) {
      int sum = 0;
      for (std::size_t j = i; j < nums.size(); ++j) expected = std::max(expected, sum += nums[j]);
    }
    ASSERT_EQ(max_sub_array(nums), expected) << "nums = " << show(nums);
  }
}

EXERCISE_TEST("dp.392", IsSubsequence, ExamplesAndBruteForce) {
  EXPECT_TRUE(is_subsequence("abc", "ahbgdc"));
  EXPECT_FALSE(is_subsequence("axc", "ahbgdc"));
  EXPECT_TRUE(is_subsequence("", "abc")) << "the empty string is a subsequence of anything";
  EXPECT_TRUE(is_subsequence("", ""));
  EXPECT_FALSE(is_subsequence("a", ""));
  Rng rng(392);
  for (int trial = 0; trial < 3000; ++trial) {
    const auto s = random_string(rng, rng.uniform_int(0, 4), 2),
               t = random_string(rng, rng.uniform_int(0, 10), 2);
    ASSERT_EQ(is_subsequence(s, t), brute::num_distinct(t, s) > 0)
        << "s = \"" << s << "\", t = \"" << t << "\"";
  }
}

}  // namespace
}  // namespace book::dynprog
