#include <algorithm>
#include <map>
#include <numeric>
#include <queue>
#include <set>
#include <string>

#include "chapters/12_dynamic_programming/brute_force.h"
#include "chapters/12_dynamic_programming/edit_distance.h"
#include "common/testing/exercise.h"
#include "tests/12_dynamic_programming/inputs.h"

namespace book::dynprog {
namespace {

using testing::random_string;

std::string quoted(const std::string& a, const std::string& b) {
  return "word1 = \"" + a + "\", word2 = \"" + b + "\"";
}

// Every subsequence of s (as a string), by enumerating subsets of positions.
std::set<std::string> subsequences(const std::string& s) {
  std::set<std::string> out;
  for (std::uint32_t mask = 0; mask < (1u << s.size()); ++mask) {
    std::string picked;
    for (std::size_t i = 0; i < s.size(); ++i)
      if (mask >> i & 1) picked += s[i];
    out.insert(picked);
  }
  return out;
}

int ascii_sum(const std::string& s) { return std::accumulate(s.begin(), s.end(), 0); }

// Brute force for 583 and 712: deleting down to a common subsequence c costs the characters not
// in c; try every common subsequence.
int cheapest_deletions(const std::string& a, const std::string& b, bool by_ascii) {
  const auto in_b = subsequences(b);
  int best = INT_MAX;
  for (const auto& c : subsequences(a))
    if (in_b.count(c)) {
      const int cost = by_ascii ? ascii_sum(a) + ascii_sum(b) - 2 * ascii_sum(c)
                                : static_cast<int>(a.size() + b.size() - 2 * c.size());
      best = std::min(best, cost);
    }
  return best;
}

// Brute force for 72: breadth-first search over strings, one edit per step. Only letters of the
// target are ever worth inserting or writing, and no optimal script makes a string longer than
// the longer input, which keeps the search small.
int edit_distance_by_search(const std::string& from, const std::string& to) {
  const std::set<char> letters(to.begin(), to.end());
  const std::size_t max_length = std::max(from.size(), to.size());
  std::map<std::string, int> distance{{from, 0}};
  std::queue<std::string> frontier;
  frontier.push(from);
  while (!frontier.empty()) {
    const std::string s = frontier.front();
    frontier.pop();
    const int d = distance[s];
    if (s == to) return d;
    std::vector<std::string> next;
    for (std::size_t i = 0; i < s.size(); ++i) next.push_back(s.substr(0, i) + s.substr(i + 1));
    for (char c : letters) {
      for (std::size_t i = 0; i < s.size(); ++i)
        next.push_back(s.substr(0, i) + c + s.substr(i + 1));
      if (s.size() < max_length)
        for (std::size_t i = 0; i <= s.size(); ++i)
          next.push_back(s.substr(0, i) + c + s.substr(i));
    }
    for (auto& n : next)
      if (distance.emplace(n, d + 1).second) frontier.push(n);
  }
  return -1;
}

// Brute force for 97: try every choice of source for each character of s3 (no memo).
bool interleaves(const std::string& s1, std::size_t i, const std::string& s2, std::size_t j,
                 const std::string& s3) {
  if (i + j == s3.size()) return i == s1.size() && j == s2.size();
  return (i < s1.size() && s1[i] == s3[i + j] && interleaves(s1, i + 1, s2, j, s3)) ||
         (j < s2.size() && s2[j] == s3[i + j] && interleaves(s1, i, s2, j + 1, s3));
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
    const auto letters = rng.uniform_int(1, 3);  // few letters, so matches are common
    const auto s = random_string(rng, rng.uniform_int(0, 12), letters),
               t = random_string(rng, rng.uniform_int(0, 4), letters);
    ASSERT_EQ(num_distinct(s, t), brute::num_distinct(s, t))
        << "s = \"" << s << "\", t = \"" << t << "\"";
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

EXERCISE_TEST("dp.583", DeleteOperationForTwoStrings, ExamplesAndBruteForce) {
  EXPECT_EQ(min_delete_steps("sea", "eat"), 2);
  EXPECT_EQ(min_delete_steps("leetcode", "etco"), 4);
  EXPECT_EQ(min_delete_steps("", "abc"), 3);
  EXPECT_EQ(min_delete_steps("same", "same"), 0);
  Rng rng(583);
  for (int trial = 0; trial < 1000; ++trial) {
    const auto a = random_string(rng, rng.uniform_int(0, 8), 3),
               b = random_string(rng, rng.uniform_int(0, 8), 3);
    ASSERT_EQ(min_delete_steps(a, b), cheapest_deletions(a, b, false)) << quoted(a, b);
  }
}

EXERCISE_TEST("dp.712", MinimumAsciiDeleteSum, ExamplesAndBruteForce) {
  EXPECT_EQ(minimum_delete_sum("sea", "eat"), 231);
  EXPECT_EQ(minimum_delete_sum("delete", "leet"), 403);
  EXPECT_EQ(minimum_delete_sum("", "a"), 97);
  Rng rng(712);
  for (int trial = 0; trial < 1000; ++trial) {
    const auto a = random_string(rng, rng.uniform_int(0, 8), 4),
               b = random_string(rng, rng.uniform_int(0, 8), 4);
    ASSERT_EQ(minimum_delete_sum(a, b), cheapest_deletions(a, b, true)) << quoted(a, b);
  }
}

EXERCISE_TEST("dp.72", EditDistance, ExamplesAndBruteForce) {
  EXPECT_EQ(min_distance("horse", "ros"), 3);
  EXPECT_EQ(min_distance("intention", "execution"), 5);
  EXPECT_EQ(min_distance("", ""), 0);
  EXPECT_EQ(min_distance("abc", ""), 3) << "delete everything";
  EXPECT_EQ(min_distance("", "abc"), 3) << "insert everything";
  Rng rng(72);
  for (int trial = 0; trial < 1000; ++trial) {
    const auto a = random_string(rng, rng.uniform_int(0, 5), 3),
               b = random_string(rng, rng.uniform_int(0, 5), 3);
    ASSERT_EQ(min_distance(a, b), edit_distance_by_search(a, b)) << quoted(a, b);
  }
  for (int trial = 0; trial < 300; ++trial) {
    const auto a = random_string(rng, rng.uniform_int(0, 8), 4),
               b = random_string(rng, rng.uniform_int(0, 8), 4);
    ASSERT_EQ(min_distance(a, b), brute::min_distance(a, b))
        << quoted(a, b) << " (vs plain recursion)";
  }
}

EXERCISE_TEST("dp.97", InterleavingString, ExamplesAndBruteForce) {
  EXPECT_TRUE(is_interleave("aabcc", "dbbca", "aadbbcbcac"));
  EXPECT_FALSE(is_interleave("aabcc", "dbbca", "aadbbbaccc"));
  EXPECT_TRUE(is_interleave("", "", ""));
  EXPECT_FALSE(is_interleave("a", "", "")) << "lengths differ";
  EXPECT_FALSE(is_interleave("", "", "a"));
  Rng rng(97);
  for (int trial = 0; trial < 3000; ++trial) {
    const auto s1 = random_string(rng, rng.uniform_int(0, 6), 2),
               s2 = random_string(rng, rng.uniform_int(0, 6), 2);
    // Half the time an actual interleaving (perhaps with one letter changed), else random.
    std::string s3;
    if (rng.uniform() < 0.5) {
      std::size_t i = 0, j = 0;
      while (i < s1.size() || j < s2.size())
        s3 += (j == s2.size() || (i < s1.size() && rng.uniform() < 0.5)) ? s1[i++] : s2[j++];
      if (!s3.empty() && rng.uniform() < 0.3) s3[rng.uniform_int(0, s3.size() - 1)] ^= 3;
    } else {
      s3 = random_string(rng,
                         s1.size() + s2.size() + rng.uniform_int(-1, 1) * (rng.uniform() < 0.2), 2);
    }
    ASSERT_EQ(is_interleave(s1, s2, s3), interleaves(s1, 0, s2, 0, s3))
        << "s1 = \"" << s1 << "\", s2 = \"" << s2 << "\", s3 = \"" << s3 << "\"";
  }
}

}  // namespace
}  // namespace book::dynprog
