#include <algorithm>
#include <climits>

#include "chapters/12_dynamic_programming/contracts.h"
#include "chapters/12_dynamic_programming/palindromes.h"

namespace book::dynprog {

// is[i][j] = s[i..j] is a palindrome = s[i] == s[j] && (j - i < 2 || is[i+1][j-1]). It reads the
// row below, so i runs DOWN and j up. O(n^2) time and, kept simple here, O(n^2) bytes.
std::string longest_palindrome(const std::string& s) {
  const std::size_t n = s.size();
  if (n == 0) return "";
  std::vector<std::vector<char>> is(n, std::vector<char>(n, 0));
  std::size_t best_start = 0, best_length = 1;
  for (std::size_t i = n; i-- > 0;)
    for (std::size_t j = i; j < n; ++j) {
      is[i][j] = s[i] == s[j] && (j - i < 2 || is[i + 1][j - 1]);
      const std::size_t length = j - i + 1;
      // i descends, so an equal length found now starts further left: >= keeps the leftmost.
      if (is[i][j] && length >= best_length) best_start = i, best_length = length;
    }
  return s.substr(best_start, best_length);
}

// Expand around each of the 2n - 1 centres: the same O(n^2) as the table, in O(1) space.
int count_substrings(const std::string& s) {
  contract::count_substrings(s);
  const int n = static_cast<int>(s.size());
  int count = 0;
  for (int centre = 0; centre < 2 * n - 1; ++centre)
    for (int left = centre / 2, right = left + centre % 2;
         left >= 0 && right < n && s[left] == s[right]; --left, ++right)
      ++count;
  return count;
}

// dp[i][j] = longest palindromic subsequence of s[i..j] = s[i] == s[j] ? dp[i+1][j-1] + 2 :
// max(dp[i+1][j], dp[i][j-1]); i descending, j ascending, one row plus the saved diagonal.
int longest_palindrome_subseq(const std::string& s) {
  const std::size_t n = s.size();
  std::vector<int> dp(n, 0);  // row i+1 of the table, becoming row i
  for (std::size_t i = n; i-- > 0;) {
    int diagonal = 0;  // dp[i+1][i], an empty range
    dp[i] = 1;
    for (std::size_t j = i + 1; j < n; ++j) {
      const int below = dp[j];  // dp[i+1][j]
      dp[j] = s[i] == s[j] ? diagonal + 2 : std::max(below, dp[j - 1]);
      diagonal = below;
    }
  }
  return n == 0 ? 0 : dp[n - 1];
}

// The characters that are not in a longest palindromic subsequence each need a mirror inserted;
// the ones that are need nothing.
int min_insertions(const std::string& s) {
  return static_cast<int>(s.size()) - longest_palindrome_subseq(s);
}

//! [max_coins]
// Interval DP on the padded array v = 1, nums..., 1: best[l][r] = most coins from bursting
// everything strictly between l and r. Choose the LAST balloon k burst there: its neighbours are
// then l and r, and the two sides are independent. Fill by increasing width.
int max_coins(const std::vector<int>& nums) {
  contract::max_coins(nums);
  std::vector<int> v;
  v.reserve(nums.size() + 2);
  v.push_back(1);
  v.insert(v.end(), nums.begin(), nums.end());
  v.push_back(1);
  const int n = static_cast<int>(v.size());
  std::vector<std::vector<int>> best(n, std::vector<int>(n, 0));
  for (int width = 2; width < n; ++width)
    for (int l = 0; l + width < n; ++l) {
      const int r = l + width;
      for (int k = l + 1; k < r; ++k)
        best[l][r] = std::max(best[l][r], best[l][k] + v[l] * v[k] * v[r] + best[k][r]);
    }
  return best[0][n - 1];
}
//! [max_coins]

// best[i][j] = least score triangulating the polygon i..j; the edge (i, j) lies in exactly one
// triangle (i, k, j), which splits the rest into i..k and k..j.
int min_score_triangulation(const std::vector<int>& values) {
  contract::min_score_triangulation(values);
  const int n = static_cast<int>(values.size());
  std::vector<std::vector<int>> best(n, std::vector<int>(n, 0));
  for (int width = 2; width < n; ++width)
    for (int i = 0; i + width < n; ++i) {
      const int j = i + width;
      best[i][j] = INT_MAX;
      for (int k = i + 1; k < j; ++k)
        best[i][j] =
            std::min(best[i][j], best[i][k] + values[i] * values[k] * values[j] + best[k][j]);
    }
  return best[0][n - 1];
}

}  // namespace book::dynprog
