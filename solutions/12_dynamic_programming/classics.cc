#include <algorithm>
#include <numeric>

#include "chapters/12_dynamic_programming/classics.h"
#include "chapters/12_dynamic_programming/contracts.h"

namespace book::dynprog {

// match[i][j] = the first i of s match the first j of p. If p[j-1] is '*' (with x = p[j-2]):
// use "x*" zero times (match[i][j-2]) or once more (x matches s[i-1] and match[i-1][j]).
// Otherwise the last characters must match and match[i-1][j-1].
bool is_match_regex(const std::string& s, const std::string& p) {
  contract::is_match_regex(p);
  const std::size_t n = s.size(), m = p.size();
  std::vector<std::vector<char>> match(n + 1, std::vector<char>(m + 1, 0));
  match[0][0] = 1;
  auto same = [&](std::size_t i, std::size_t j) { return p[j - 1] == '.' || p[j - 1] == s[i - 1]; };
  for (std::size_t i = 0; i <= n; ++i)
    for (std::size_t j = 1; j <= m; ++j) {
      if (p[j - 1] == '*')
        match[i][j] =
            (j >= 2 && match[i][j - 2]) || (i > 0 && j >= 2 && same(i, j - 1) && match[i - 1][j]);
      else
        match[i][j] = i > 0 && same(i, j) && match[i - 1][j - 1];
    }
  return match[n][m];
}

// As 10, but '*' stands alone: it matches nothing (match[i][j-1]) or one more character
// (match[i-1][j]).
bool is_match_wildcard(const std::string& s, const std::string& p) {
  const std::size_t n = s.size(), m = p.size();
  std::vector<std::vector<char>> match(n + 1, std::vector<char>(m + 1, 0));
  match[0][0] = 1;
  for (std::size_t i = 0; i <= n; ++i)
    for (std::size_t j = 1; j <= m; ++j) {
      if (p[j - 1] == '*')
        match[i][j] = match[i][j - 1] || (i > 0 && match[i - 1][j]);
      else
        match[i][j] = i > 0 && (p[j - 1] == '?' || p[j - 1] == s[i - 1]) && match[i - 1][j - 1];
    }
  return match[n][m];
}

//! [super_egg_drop]
// Turn the question round: with t drops and k eggs, how many floors can be settled? One drop
// splits them into the floors below (t-1 drops, k-1 eggs: it broke), above (t-1, k: it did not),
// and itself: f(t, k) = f(t-1, k-1) + f(t-1, k) + 1, whose solution is sum_{i=1..k} C(t, i).
// f grows with t, so binary-search the least t with f(t, k) >= n: O(k) per probe, O(k log n).
int super_egg_drop(int k, int n) {
  contract::super_egg_drop(k, n);
  auto floors_settled = [k, n](int t) {  // sum_{i=1..k} C(t, i), stopping once it reaches n
    long long total = 0, term = 1;       // term = C(t, i)
    for (int i = 1; i <= k && total < n; ++i) {
      term = term * (t - i + 1) / i;  // exact: C(t, i-1)·(t-i+1) is divisible by i
      if (term == 0) break;
      total += term;
    }
    return total;
  };
  int lo = 1, hi = n;  // n drops always suffice (one egg, floor by floor)
  while (lo < hi) {
    const int mid = lo + (hi - lo) / 2;
    if (floors_settled(mid) >= n)
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}
//! [super_egg_drop]

// Sort jobs by end time; best[i] = most profit from the first i jobs = max(best[i-1] (skip job
// i-1), profit + best[p]) where p = how many jobs end by its start (binary search on the ends).
int job_scheduling(const std::vector<int>& start_time, const std::vector<int>& end_time,
                   const std::vector<int>& profit) {
  contract::job_scheduling(start_time, end_time, profit);
  const std::size_t n = start_time.size();
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return end_time[a] < end_time[b]; });
  std::vector<int> ends(n);
  for (std::size_t i = 0; i < n; ++i) ends[i] = end_time[order[i]];
  std::vector<int> best(n + 1, 0);
  for (std::size_t i = 1; i <= n; ++i) {
    const std::size_t job = order[i - 1];
    const auto compatible = static_cast<std::size_t>(
        std::upper_bound(ends.begin(), ends.begin() + (i - 1), start_time[job]) - ends.begin());
    best[i] = std::max(best[i - 1], best[compatible] + profit[job]);
  }
  return best[n];
}

// Binary search on the answer: "can the parts all stay <= limit with at most k parts?" is
// monotone in limit and a greedy scan answers it in O(n). O(n log(sum)) against the DP's
// O(k · n^2) (dp[j][i] = best largest sum cutting the first i into j parts).
int split_array(const std::vector<int>& nums, int k) {
  contract::split_array(nums, k);
  auto parts_needed = [&](long long limit) {
    int parts = 1;
    long long current = 0;
    for (int x : nums) {
      if (current + x > limit) ++parts, current = 0;
      current += x;
    }
    return parts;
  };
  long long lo = *std::max_element(nums.begin(), nums.end());
  long long hi = std::accumulate(nums.begin(), nums.end(), 0LL);
  while (lo < hi) {
    const long long mid = lo + (hi - lo) / 2;
    if (parts_needed(mid) <= k)
      hi = mid;
    else
      lo = mid + 1;
  }
  return static_cast<int>(lo);
}

}  // namespace book::dynprog
