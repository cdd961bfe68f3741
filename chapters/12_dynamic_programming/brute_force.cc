#include "chapters/12_dynamic_programming/brute_force.h"

#include <algorithm>
#include <bit>
#include <climits>
#include <numeric>

#include "common/check.h"

namespace book::dynprog::brute {

namespace {
void check_enumerable(std::size_t n, const char* what) {
  BOOK_CHECK(n <= kMaxEnumerated, "brute force over 2^"
                                      << n << " subsets of " << what
                                      << " would take too long; keep it <= " << kMaxEnumerated
                                      << " (the DP has no limit)");
}

bool contains_subsequence(const std::string& haystack, const std::string& needle) {
  std::size_t matched = 0;
  for (char c : haystack)
    if (matched < needle.size() && needle[matched] == c) ++matched;
  return matched == needle.size();
}
}  // namespace

std::uint64_t num_distinct(const std::string& s, const std::string& t) {
  check_enumerable(s.size(), "s");
  std::uint64_t count = 0;
  if (t.size() > s.size()) return 0;
  std::string picked;
  for (std::uint32_t mask = 0; mask < (1u << s.size()); ++mask) {
    if (static_cast<std::size_t>(std::popcount(mask)) != t.size()) continue;
    picked.clear();
    for (std::size_t i = 0; i < s.size(); ++i)
      if (mask >> i & 1) picked += s[i];
    count += picked == t;
  }
  return count;
}

int longest_common_subsequence(const std::string& a, const std::string& b) {
  check_enumerable(a.size(), "text1");
  int best = 0;
  std::string picked;
  for (std::uint32_t mask = 0; mask < (1u << a.size()); ++mask) {
    if (std::popcount(mask) <= best) continue;
    picked.clear();
    for (std::size_t i = 0; i < a.size(); ++i)
      if (mask >> i & 1) picked += a[i];
    if (contains_subsequence(b, picked)) best = std::popcount(mask);
  }
  return best;
}

int length_of_lis(const std::vector<int>& nums) {
  check_enumerable(nums.size(), "nums");
  int best = 0;
  for (std::uint32_t mask = 0; mask < (1u << nums.size()); ++mask) {
    if (std::popcount(mask) <= best) continue;
    bool increasing = true, first = true;
    int last = 0;
    for (std::size_t i = 0; i < nums.size() && increasing; ++i)
      if (mask >> i & 1) {
        increasing = first || nums[i] > last;
        last = nums[i], first = false;
      }
    if (increasing) best = std::popcount(mask);
  }
  return best;
}

bool can_partition(const std::vector<int>& nums) {
  check_enumerable(nums.size(), "nums");
  const long long total = std::accumulate(nums.begin(), nums.end(), 0LL);
  for (std::uint32_t mask = 0; mask < (1u << nums.size()); ++mask) {
    long long sum = 0;
    for (std::size_t i = 0; i < nums.size(); ++i)
      if (mask >> i & 1) sum += nums[i];
    if (2 * sum == total) return true;
  }
  return false;
}

namespace {
int fewest_coins(const std::vector<int>& coins, int amount) {
  if (amount == 0) return 0;
  int best = INT_MAX;
  for (int coin : coins)
    if (coin <= amount)
      if (const int rest = fewest_coins(coins, amount - coin); rest != INT_MAX)
        best = std::min(best, rest + 1);
  return best;
}

int edits(const std::string& a, std::size_t i, const std::string& b, std::size_t j) {
  if (i == 0) return static_cast<int>(j);
  if (j == 0) return static_cast<int>(i);
  if (a[i - 1] == b[j - 1]) return edits(a, i - 1, b, j - 1);
  return 1 + std::min({edits(a, i - 1, b, j - 1), edits(a, i - 1, b, j), edits(a, i, b, j - 1)});
}
}  // namespace

int coin_change(const std::vector<int>& coins, int amount) {
  BOOK_CHECK(amount >= 0 && amount <= 60,
             "brute-force coin change is exponential in the amount; keep 0 <= amount <= 60, got "
                 << amount);
  for (int coin : coins) BOOK_CHECK(coin > 0, "coins must be positive, got " << coin);
  const int best = fewest_coins(coins, amount);
  return best == INT_MAX ? -1 : best;
}

int min_distance(const std::string& a, const std::string& b) {
  BOOK_CHECK(a.size() + b.size() <= 22,
             "brute-force edit distance makes up to 3^(|a|+|b|) calls; keep "
             "|a| + |b| <= 22, got "
                 << a.size() + b.size());
  return edits(a, a.size(), b, b.size());
}

std::string longest_palindrome(const std::string& s) {
  std::size_t best_start = 0, best_length = 0;
  for (std::size_t i = 0; i < s.size(); ++i)
    for (std::size_t j = i; j < s.size(); ++j) {
      const std::size_t length = j - i + 1;
      if (length <= best_length) continue;
      bool palindrome = true;
      for (std::size_t l = i, r = j; l < r && palindrome; ++l, --r) palindrome = s[l] == s[r];
      if (palindrome) best_start = i, best_length = length;
    }
  return s.substr(best_start, best_length);
}

}  // namespace book::dynprog::brute
