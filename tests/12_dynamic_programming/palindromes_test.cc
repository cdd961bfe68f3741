#include <algorithm>
#include <climits>
#include <functional>
#include <string>

#include "chapters/12_dynamic_programming/brute_force.h"
#include "chapters/12_dynamic_programming/palindromes.h"
#include "common/testing/exercise.h"
#include "tests/12_dynamic_programming/inputs.h"

namespace book::dynprog {
namespace {

using testing::random_ints;
using testing::random_string;
using testing::show;

bool is_palindrome(const std::string& s) { return std::equal(s.begin(), s.end(), s.rbegin()); }

// Brute force for 516: every subsequence.
int longest_palindromic_subsequence(const std::string& s) {
  int best = 0;
  for (std::uint32_t mask = 0; mask < (1u << s.size()); ++mask) {
    if (std::popcount(mask) <= best) continue;
    std::string picked;
    for (std::size_t i = 0; i < s.size(); ++i)
      if (mask >> i & 1) picked += s[i];
    if (is_palindrome(picked)) best = std::popcount(mask);
  }
  return best;
}

// Brute force for 312: every order of bursting (n! orders).
int best_bursting(std::vector<int> nums) {
  if (nums.empty()) return 0;
  int best = 0;
  for (std::size_t i = 0; i < nums.size(); ++i) {
    const int left = i > 0 ? nums[i - 1] : 1, right = i + 1 < nums.size() ? nums[i + 1] : 1;
    std::vector<int> rest = nums;
    rest.erase(rest.begin() + i);
    best = std::max(best, left * nums[i] * right + best_bursting(rest));
  }
  return best;
}

// Brute force for 1039: every triangulation, by choosing for the edge (i, j) each apex k and
// recursing without memo (Catalan(n - 2) triangulations).
int cheapest_triangulation(const std::vector<int>& v, int i, int j) {
  if (j - i < 2) return 0;
  int best = INT_MAX;
  for (int k = i + 1; k < j; ++k)
    best = std::min(best, cheapest_triangulation(v, i, k) + v[i] * v[k] * v[j] +
                              cheapest_triangulation(v, k, j));
  return best;
}

EXERCISE_TEST("dp.5", LongestPalindromicSubstring, ExamplesAndBruteForce) {
  EXPECT_EQ(longest_palindrome("babad"), "bab") << "\"aba\" is as long; the leftmost is asked for";
  EXPECT_EQ(longest_palindrome("cbbd"), "bb");
  EXPECT_EQ(longest_palindrome("a"), "a");
  EXPECT_EQ(longest_palindrome(""), "");
  EXPECT_EQ(longest_palindrome("abcd"), "a") << "no repeats: the first letter";
  Rng rng(5);
  for (int trial = 0; trial < 3000; ++trial) {
    const auto s = random_string(rng, rng.uniform_int(0, 16), rng.uniform_int(1, 3));
    ASSERT_EQ(longest_palindrome(s), brute::longest_palindrome(s)) << "s = \"" << s << "\"";
  }
  const std::string long_one = std::string(500, 'x') + "y" + std::string(499, 'x');
  EXPECT_EQ(longest_palindrome(long_one), std::string(499, 'x') + "y" + std::string(499, 'x'))
      << "1000 characters, LeetCode's maximum";
}

EXERCISE_TEST("dp.647", PalindromicSubstrings, ExamplesAndBruteForce) {
  EXPECT_EQ(count_substrings("abc"), 3);
  EXPECT_EQ(count_substrings("aaa"), 6);
  EXPECT_EQ(count_substrings(""), 0);
  EXPECT_EQ(count_substrings(std::string(1000, 'a')), 500500) << "1000 × 'a': every substring";
  Rng rng(647);
  for (int trial = 0; trial < 3000; ++trial) {
    const auto s = random_string(rng, rng.uniform_int(0, 16), rng.uniform_int(1, 3));
    int expected = 0;
    for (std::size_t i = 0; i < s.size(); ++i)
      for (std::size_t len = 1; i + len <= s.size(); ++len)
        expected += is_palindrome(s.substr(i, len));
    ASSERT_EQ(count_substrings(s), expected) << "s = \"" << s << "\"";
  }
}

EXERCISE_TEST("dp.516", LongestPalindromicSubsequence, ExamplesAndBruteForce) {
  EXPECT_EQ(longest_palindrome_subseq("bbbab"), 4);
  EXPECT_EQ(longest_palindrome_subseq("cbbd"), 2);
  EXPECT_EQ(longest_palindrome_subseq("z"), 1);
  Rng rng(516);
  for (int trial = 0; trial < 2000; ++trial) {
    const auto s = random_string(rng, rng.uniform_int(1, 12), rng.uniform_int(1, 4));
    ASSERT_EQ(longest_palindrome_subseq(s), longest_palindromic_subsequence(s))
        << "s = \"" << s << "\"";
  }
}

EXERCISE_TEST("dp.1312", MinimumInsertionsToPalindrome, ExamplesAndBruteForce) {
  EXPECT_EQ(min_insertions("zzazz"), 0);
  EXPECT_EQ(min_insertions("mbadm"), 2);
  EXPECT_EQ(min_insertions("leetcode"), 5);
  EXPECT_EQ(min_insertions("ab"), 1);
  Rng rng(1312);
  for (int trial = 0; trial < 2000; ++trial) {
    const auto s = random_string(rng, rng.uniform_int(1, 12), rng.uniform_int(1, 4));
    // Every character outside a longest palindromic subsequence needs exactly one mirror.
    ASSERT_EQ(min_insertions(s), static_cast<int>(s.size()) - longest_palindromic_subsequence(s))
        << "s = \"" << s << "\"";
  }
}

EXERCISE_TEST("dp.312", BurstBalloons, ExamplesAndBruteForce) {
  EXPECT_EQ(max_coins({3, 1, 5, 8}), 167);
  EXPECT_EQ(max_coins({1, 5}), 10);
  EXPECT_EQ(max_coins({7}), 7);
  Rng rng(312);
  for (int trial = 0; trial < 1000; ++trial) {
    const auto nums = random_ints(rng, rng.uniform_int(1, 6), 0, 9);
    ASSERT_EQ(max_coins(nums), best_bursting(nums)) << "nums = " << show(nums);
  }
}

EXERCISE_TEST("dp.1039", MinimumScoreTriangulation, ExamplesAndBruteForce) {
  EXPECT_EQ(min_score_triangulation({1, 2, 3}), 6);
  EXPECT_EQ(min_score_triangulation({3, 7, 4, 5}), 144);
  EXPECT_EQ(min_score_triangulation({1, 3, 1, 4, 1, 5}), 13);
  Rng rng(1039);
  for (int trial = 0; trial < 1000; ++trial) {
    const auto values = random_ints(rng, rng.uniform_int(3, 9), 1, 100);
    ASSERT_EQ(min_score_triangulation(values),
              cheapest_triangulation(values, 0, static_cast<int>(values.size()) - 1))
        << "values = " << show(values);
  }
}

}  // namespace
}  // namespace book::dynprog
