#include <algorithm>
#include <climits>
#include <numeric>
#include <string>

#include "chapters/12_dynamic_programming/bitmask.h"
#include "common/testing/exercise.h"
#include "tests/12_dynamic_programming/inputs.h"

namespace book::dynprog {
namespace {

using testing::random_ints;
using testing::random_string;
using testing::show;

// Brute force for 464: the whole game tree, no memo.
bool first_player_wins(std::vector<int>& unused, int remaining) {
  for (std::size_t i = 0; i < unused.size(); ++i) {
    const int x = unused[i];
    if (x >= remaining) return true;
    unused.erase(unused.begin() + i);
    const bool opponent_wins = first_player_wins(unused, remaining - x);
    unused.insert(unused.begin() + i, x);
    if (!opponent_wins) return true;
  }
  return false;
}

// Brute force for 698: every assignment of numbers to groups (k^n).
bool splits_evenly(const std::vector<int>& nums, int k) {
  const int total = std::accumulate(nums.begin(), nums.end(), 0);
  if (total % k) return false;
  std::vector<int> group(nums.size(), 0);
  while (true) {
    std::vector<int> sums(k, 0);
    for (std::size_t i = 0; i < nums.size(); ++i) sums[group[i]] += nums[i];
    if (std::all_of(sums.begin(), sums.end(), [&](int s) { return s == total / k; })) return true;
    std::size_t i = 0;  // next assignment, counting in base k
    while (i < group.size() && ++group[i] == k) group[i++] = 0;
    if (i == group.size()) return false;
  }
}

// A random connected undirected graph on n nodes: a random spanning tree plus extra edges.
std::vector<std::vector<int>> random_connected_graph(Rng& rng, int n) {
  std::vector<std::vector<char>> edge(n, std::vector<char>(n, 0));
  for (int v = 1; v < n; ++v) {
    const int u = static_cast<int>(rng.uniform_int(0, v - 1));
    edge[u][v] = edge[v][u] = 1;
  }
  for (int extra = static_cast<int>(rng.uniform_int(0, n)); extra > 0; --extra) {
    const int u = static_cast<int>(rng.uniform_int(0, n - 1)),
              v = static_cast<int>(rng.uniform_int(0, n - 1));
    if (u != v) edge[u][v] = edge[v][u] = 1;
  }
  std::vector<std::vector<int>> graph(n);
  for (int u = 0; u < n; ++u)
    for (int v = 0; v < n; ++v)
      if (edge[u][v]) graph[u].push_back(v);
  return graph;
}

// Brute force for 847: all-pairs distances (Floyd–Warshall), then every visiting order.
int shortest_tour(const std::vector<std::vector<int>>& graph) {
  const int n = static_cast<int>(graph.size());
  std::vector<std::vector<int>> d(n, std::vector<int>(n, INT_MAX / 4));
  for (int u = 0; u < n; ++u) {
    d[u][u] = 0;
    for (int v : graph[u]) d[u][v] = 1;
  }
  for (int m = 0; m < n; ++m)
    for (int u = 0; u < n; ++u)
      for (int v = 0; v < n; ++v) d[u][v] = std::min(d[u][v], d[u][m] + d[m][v]);
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  int best = INT_MAX;
  do {
    int length = 0;
    for (int i = 1; i < n; ++i) length += d[order[i - 1]][order[i]];
    best = std::min(best, length);
  } while (std::next_permutation(order.begin(), order.end()));
  return best;
}

// Brute force for 943: every order of the words, each glued with its largest overlap (optimal for
// a fixed order when no word contains another).
std::size_t shortest_superstring_length(std::vector<std::string> words) {
  std::sort(words.begin(), words.end());
  std::size_t best = SIZE_MAX;
  do {
    std::string glued = words[0];
    for (std::size_t i = 1; i < words.size(); ++i) {
      std::size_t overlap = std::min(glued.size(), words[i].size());
      while (glued.compare(glued.size() - overlap, overlap, words[i], 0, overlap) != 0) --overlap;
      glued += words[i].substr(overlap);
    }
    best = std::min(best, glued.size());
  } while (std::next_permutation(words.begin(), words.end()));
  return best;
}

EXERCISE_TEST("dp.464", CanIWin, ExamplesAndGameTree) {
  EXPECT_FALSE(can_i_win(10, 11));
  EXPECT_TRUE(can_i_win(10, 0));
  EXPECT_TRUE(can_i_win(10, 1));
  EXPECT_FALSE(can_i_win(5, 50)) << "1 + ... + 5 = 15 never reaches 50: nobody wins";
  EXPECT_FALSE(can_i_win(20, 210)) << "all 20 numbers are needed: the second player takes the last";
  for (int m = 1; m <= 7; ++m)
    for (int total = 0; total <= m * (m + 1) / 2 + 1; ++total) {
      std::vector<int> unused(m);
      std::iota(unused.begin(), unused.end(), 1);
      const bool expected =
          total <= 0 || (m * (m + 1) / 2 >= total && first_player_wins(unused, total));
      ASSERT_EQ(can_i_win(m, total), expected)
          << "max_choosable_integer = " << m << ", desired_total = " << total;
    }
}

EXERCISE_TEST("dp.526", BeautifulArrangement, ExamplesAndBruteForce) {
  EXPECT_EQ(count_arrangement(2), 2);
  EXPECT_EQ(count_arrangement(1), 1);
  for (int n = 1; n <= 9; ++n) {
    std::vector<int> p(n);
    std::iota(p.begin(), p.end(), 1);
    int expected = 0;
    do {
      bool beautiful = true;
      for (int i = 1; i <= n && beautiful; ++i) beautiful = p[i - 1] % i == 0 || i % p[i - 1] == 0;
      expected += beautiful;
    } while (std::next_permutation(p.begin(), p.end()));
    ASSERT_EQ(count_arrangement(n), expected) << "n = " << n;
  }
  EXPECT_EQ(count_arrangement(15), 24679) << "LeetCode's largest input";
}

EXERCISE_TEST("dp.698", PartitionToKEqualSumSubsets, ExamplesAndBruteForce) {
  EXPECT_TRUE(can_partition_k_subsets({4, 3, 2, 3, 5, 2, 1}, 4));
  EXPECT_FALSE(can_partition_k_subsets({1, 2, 3, 4}, 3));
  EXPECT_TRUE(can_partition_k_subsets({9}, 1));
  EXPECT_FALSE(can_partition_k_subsets({2, 2, 2, 2, 3, 4, 5}, 4)) << "sum divides, groups do not";
  Rng rng(698);
  for (int trial = 0; trial < 1000; ++trial) {
    const auto nums = random_ints(rng, rng.uniform_int(1, 8), 1, 6);
    const int k = static_cast<int>(rng.uniform_int(1, std::min<std::int64_t>(4, nums.size())));
    ASSERT_EQ(can_partition_k_subsets(nums, k), splits_evenly(nums, k))
        << "nums = " << show(nums) << ", k = " << k;
  }
}

EXERCISE_TEST("dp.847", ShortestPathVisitingAllNodes, ExamplesAndBruteForce) {
  EXPECT_EQ(shortest_path_length({{1, 2, 3}, {0}, {0}, {0}}), 4);
  EXPECT_EQ(shortest_path_length({{1}, {0, 2, 4}, {1, 3, 4}, {2}, {1, 2}}), 4);
  EXPECT_EQ(shortest_path_length({{}}), 0) << "one node: already visited";
  Rng rng(847);
  for (int trial = 0; trial < 1000; ++trial) {
    const auto graph = random_connected_graph(rng, static_cast<int>(rng.uniform_int(1, 7)));
    ASSERT_EQ(shortest_path_length(graph), shortest_tour(graph)) << "graph = " << show(graph);
  }
}

EXERCISE_TEST("dp.943", ShortestSuperstring, ExamplesAndBruteForce) {
  auto check = [](const std::vector<std::string>& words, std::size_t expected_length) {
    const std::string answer = shortest_superstring(words);
    EXPECT_EQ(answer.size(), expected_length)
        << "words = " << show(words) << ", answer = \"" << answer << "\"";
    for (const auto& w : words)
      EXPECT_NE(answer.find(w), std::string::npos) << "\"" << w << "\" missing from the answer \""
                                                   << answer << "\"; words = " << show(words);
  };
  check({"alex", "loves", "leetcode"}, 17);
  check({"catg", "ctaagt", "gcta", "ttca", "atgcatc"}, 16);
  check({"solo"}, 4);
  Rng rng(943);
  for (int trial = 0; trial < 500; ++trial) {
    std::vector<std::string> words;
    const auto count = rng.uniform_int(1, 6);
    for (int attempt = 0; attempt < 100 && static_cast<std::int64_t>(words.size()) < count;
         ++attempt) {
      const auto w = random_string(rng, rng.uniform_int(1, 4), 2);
      // LeetCode's promise: no word is a substring of another.
      const bool contained = std::any_of(words.begin(), words.end(), [&](const std::string& o) {
        return o.find(w) != std::string::npos || w.find(o) != std::string::npos;
      });
      if (!contained) words.push_back(w);
    }
    check(words, shortest_superstring_length(words));
    if (::testing::Test::HasFailure()) return;
  }
}

}  // namespace
}  // namespace book::dynprog
