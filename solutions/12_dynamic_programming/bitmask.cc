#include <algorithm>
#include <bit>
#include <climits>
#include <numeric>
#include <queue>

#include "chapters/12_dynamic_programming/bitmask.h"
#include "chapters/12_dynamic_programming/contracts.h"

namespace book::dynprog {

// The state is the set of numbers used (the running total follows from it): 2^m states, each a
// win or a loss for the player to move. A move wins if it reaches the total or leaves the other
// player in a losing state.
bool can_i_win(int max_choosable_integer, int desired_total) {
  contract::can_i_win(max_choosable_integer, desired_total);
  const int m = max_choosable_integer;
  if (desired_total <= 0) return true;
  if (m * (m + 1) / 2 < desired_total) return false;  // nobody ever reaches it
  std::vector<signed char> memo(1u << m, -1);         // -1 unknown, 0 lose, 1 win
  auto wins = [&](auto&& self, unsigned used, int remaining) -> bool {
    auto& known = memo[used];
    if (known >= 0) return known;
    for (int x = 1; x <= m; ++x)
      if (!(used >> (x - 1) & 1) &&
          (x >= remaining || !self(self, used | 1u << (x - 1), remaining - x))) {
        known = 1;
        return true;
      }
    known = 0;
    return false;
  };
  return wins(wins, 0, desired_total);
}

//! [count_arrangement]
// count[mask] = ways to fill positions 1..popcount(mask) with exactly the numbers in mask; the
// next position takes any unused number that divides it or that it divides.
int count_arrangement(int n) {
  contract::count_arrangement(n);
  std::vector<int> count(1u << n, 0);
  count[0] = 1;
  for (unsigned mask = 0; mask < (1u << n); ++mask) {
    if (!count[mask]) continue;
    const int position = std::popcount(mask) + 1;
    for (int x = 1; x <= n; ++x)
      if (!(mask >> (x - 1) & 1) && (x % position == 0 || position % x == 0))
        count[mask | 1u << (x - 1)] += count[mask];
  }
  return count[(1u << n) - 1];
}
//! [count_arrangement]

// Fill the groups one after another: fill[mask] = how full the current group is after using the
// numbers in mask (-1: unreachable). A number fits if it does not overflow the current group.
bool can_partition_k_subsets(const std::vector<int>& nums, int k) {
  contract::can_partition_k_subsets(nums, k);
  const int total = std::accumulate(nums.begin(), nums.end(), 0);
  if (total % k != 0) return false;
  const int target = total / k;
  const int n = static_cast<int>(nums.size());
  std::vector<int> fill(1u << n, -1);
  fill[0] = 0;
  for (unsigned mask = 0; mask < (1u << n); ++mask) {
    if (fill[mask] < 0) continue;
    for (int i = 0; i < n; ++i)
      if (!(mask >> i & 1) && fill[mask] + nums[i] <= target)
        fill[mask | 1u << i] = (fill[mask] + nums[i]) % target;
  }
  return fill[(1u << n) - 1] == 0;
}

// Breadth-first search over (node, visited set): n · 2^n states, each edge costing 1, starting
// from every node at once. The first state with every node visited gives the answer.
int shortest_path_length(const std::vector<std::vector<int>>& graph) {
  contract::shortest_path_length(graph);
  const int n = static_cast<int>(graph.size());
  const unsigned all = (1u << n) - 1;
  std::vector<std::vector<int>> distance(n, std::vector<int>(1u << n, -1));
  std::queue<std::pair<int, unsigned>> frontier;
  for (int v = 0; v < n; ++v) {
    distance[v][1u << v] = 0;
    frontier.push({v, 1u << v});
  }
  while (!frontier.empty()) {
    const auto [v, visited] = frontier.front();
    frontier.pop();
    if (visited == all) return distance[v][visited];
    for (int w : graph[v]) {
      const unsigned next = visited | 1u << w;
      if (distance[w][next] < 0) {
        distance[w][next] = distance[v][visited] + 1;
        frontier.push({w, next});
      }
    }
  }
  return -1;  // unreachable for a connected graph
}

// The travelling-salesman DP on overlaps: best[mask][last] = the shortest string containing the
// words in mask and ending with word `last`; adding word w after it costs |w| - overlap(last, w).
std::string shortest_superstring(const std::vector<std::string>& words) {
  contract::shortest_superstring(words);
  const int n = static_cast<int>(words.size());
  std::vector<std::vector<int>> overlap(n, std::vector<int>(n, 0));
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b)
      if (a != b)
        for (int len = static_cast<int>(std::min(words[a].size(), words[b].size())); len > 0; --len)
          if (words[a].compare(words[a].size() - len, len, words[b], 0, len) == 0) {
            overlap[a][b] = len;
            break;
          }
  const unsigned full = 1u << n;
  std::vector<std::vector<int>> length(full, std::vector<int>(n, INT_MAX));
  std::vector<std::vector<int>> previous(full, std::vector<int>(n, -1));
  for (int w = 0; w < n; ++w) length[1u << w][w] = static_cast<int>(words[w].size());
  for (unsigned mask = 1; mask < full; ++mask)
    for (int last = 0; last < n; ++last) {
      if (length[mask][last] == INT_MAX) continue;
      for (int w = 0; w < n; ++w) {
        if (mask >> w & 1) continue;
        const int candidate =
            length[mask][last] + static_cast<int>(words[w].size()) - overlap[last][w];
        auto& slot = length[mask | 1u << w][w];
        if (candidate < slot) slot = candidate, previous[mask | 1u << w][w] = last;
      }
    }
  // Walk back from the best end, then glue the words in order.
  int last = static_cast<int>(std::min_element(length[full - 1].begin(), length[full - 1].end()) -
                              length[full - 1].begin());
  std::vector<int> order;
  for (unsigned mask = full - 1; last >= 0;) {
    order.push_back(last);
    const int before = previous[mask][last];
    mask &= ~(1u << last);
    last = before;
  }
  std::reverse(order.begin(), order.end());
  std::string result = words[order[0]];
  for (std::size_t i = 1; i < order.size(); ++i)
    result += words[order[i]].substr(overlap[order[i - 1]][order[i]]);
  return result;
}

}  // namespace book::dynprog
