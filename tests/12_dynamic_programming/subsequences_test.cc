#include <cstdint>
#include <string>

#include "chapters/12_dynamic_programming/dp.h"
#include "common/rng.h"
#include "common/testing/exercise.h"

namespace book::dp {
namespace {

// Brute force: every subset of positions of s, counted when it spells t. O(2^|s| · |s|).
std::uint64_t count_by_enumeration(const std::string& s, const std::string& t) {
  std::uint64_t count = 0;
  for (std::uint32_t mask = 0; mask < (1u << s.size()); ++mask) {
    std::string picked;
    for (std::size_t i = 0; i < s.size(); ++i)
      if (mask >> i & 1) picked += s[i];
    count += picked == t;
  }
  return count;
}

EXERCISE_TEST("dp.115", DistinctSubsequences, LeetCodeExamples) {
  EXPECT_EQ(num_distinct("rabbbit", "rabbit"), 3u);
  EXPECT_EQ(num_distinct("babgbag", "bag"), 5u);
}

EXERCISE_TEST("dp.115", DistinctSubsequences, EdgeCases) {
  EXPECT_EQ(num_distinct("", ""), 1u) << "the empty t is one subsequence of the empty s";
  EXPECT_EQ(num_distinct("abc", ""), 1u);
  EXPECT_EQ(num_distinct("", "a"), 0u);
  EXPECT_EQ(num_distinct("a", "ab"), 0u) << "t longer than s";
}

EXERCISE_TEST("dp.115", DistinctSubsequences, MatchesBruteForceOnRandomInputs) {
  Rng rng(115);
  for (int trial = 0; trial < 2000; ++trial) {
    std::string s, t;
    const auto s_len = rng.uniform_int(0, 12), t_len = rng.uniform_int(0, 4);
    const auto letters = rng.uniform_int(1, 3);  // few letters, so matches are common
    for (int i = 0; i < s_len; ++i) s += static_cast<char>('a' + rng.uniform_int(0, letters - 1));
    for (int i = 0; i < t_len; ++i) t += static_cast<char>('a' + rng.uniform_int(0, letters - 1));
    ASSERT_EQ(num_distinct(s, t), count_by_enumeration(s, t)) << "s = \"" << s << "\", t = \"" << t << "\"";
  }
}

EXERCISE_TEST("dp.115", DistinctSubsequences, CountsModulo2To64) {
  // s = 200 × 'a', t = 100 × 'a': C(200, 100) ≈ 9e58 overflows; the answer is exact mod 2^64.
  // Pascal's rule in uint64_t computes C(200, 100) mod 2^64 independently of the DP's layout.
  std::vector<std::uint64_t> row(101, 0);
  row[0] = 1;
  for (int n = 1; n <= 200; ++n)
    for (int k = std::min(n, 100); k >= 1; --k) row[k] += row[k - 1];
  EXPECT_EQ(num_distinct(std::string(200, 'a'), std::string(100, 'a')), row[100]);
}

}  // namespace
}  // namespace book::dp
