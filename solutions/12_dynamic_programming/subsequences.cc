#include <algorithm>
#include <climits>

#include "chapters/12_dynamic_programming/contracts.h"
#include "chapters/12_dynamic_programming/subsequences.h"

namespace book::dynprog {

//! [length_of_lis]
// tails[len-1] = the smallest value that ends an increasing subsequence of length len. tails is
// increasing, so each number finds its place by binary search: O(n log n) instead of the O(n^2)
// "dp[i] = longest ending at i" table.
int length_of_lis(const std::vector<int>& nums) {
  std::vector<int> tails;
  for (int x : nums) {
    const auto slot = std::lower_bound(tails.begin(), tails.end(), x);  // strict: lower_bound
    if (slot == tails.end())
      tails.push_back(x);
    else
      *slot = x;
  }
  return static_cast<int>(tails.size());
}
//! [length_of_lis]

// Sort by width ascending and, for equal widths, height DESCENDING, so two envelopes of the same
// width can never both be in an increasing run of heights; then it is 300 on the heights.
int max_envelopes(const std::vector<std::vector<int>>& envelopes) {
  contract::max_envelopes(envelopes);
  std::vector<std::vector<int>> sorted = envelopes;
  std::sort(sorted.begin(), sorted.end(),
            [](const auto& a, const auto& b) { return a[0] != b[0] ? a[0] < b[0] : a[1] > b[1]; });
  std::vector<int> heights;
  heights.reserve(sorted.size());
  for (const auto& e : sorted) heights.push_back(e[1]);
  return length_of_lis(heights);
}

// dp[i] = longest run ending at i = nums[i] > nums[i-1] ? dp[i-1] + 1 : 1.
int find_length_of_lcis(const std::vector<int>& nums) {
  int best = 0, run = 0;
  for (std::size_t i = 0; i < nums.size(); ++i) {
    run = (i > 0 && nums[i] > nums[i - 1]) ? run + 1 : 1;
    best = std::max(best, run);
  }
  return best;
}

// dp[i][j] = longest common run ENDING at nums1[i-1] and nums2[j-1]; the answer is the largest
// cell, not the last one. One row, j descending, because dp[i][j] reads dp[i-1][j-1].
int find_length(const std::vector<int>& nums1, const std::vector<int>& nums2) {
  std::vector<int> dp(nums2.size() + 1, 0);
  int best = 0;
  for (std::size_t i = 1; i <= nums1.size(); ++i)
    for (std::size_t j = nums2.size(); j >= 1; --j) {
      dp[j] = nums1[i - 1] == nums2[j - 1] ? dp[j - 1] + 1 : 0;
      best = std::max(best, dp[j]);
    }
  return best;
}

namespace {
// dp[i][j] = LCS of the first i of a and the first j of b:
// a[i-1] == b[j-1] ? dp[i-1][j-1] + 1 : max(dp[i-1][j], dp[i][j-1]). One row plus the saved
// diagonal (dp[i-1][j-1], overwritten just before it is needed).
template <typename Sequence>
int lcs(const Sequence& a, const Sequence& b) {
  std::vector<int> dp(b.size() + 1, 0);
  for (std::size_t i = 1; i <= a.size(); ++i) {
    int diagonal = 0;  // dp[i-1][0]
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const int above = dp[j];
      dp[j] = a[i - 1] == b[j - 1] ? diagonal + 1 : std::max(above, dp[j - 1]);
      diagonal = above;
    }
  }
  return dp[b.size()];
}
}  // namespace

int longest_common_subsequence(const std::string& text1, const std::string& text2) {
  return lcs(text1, text2);
}

// Lines that do not cross join equal values in the same order on both sides: a common
// subsequence.
int max_uncrossed_lines(const std::vector<int>& nums1, const std::vector<int>& nums2) {
  return lcs(nums1, nums2);
}

// Kadane: dp[i] = best sum ending at i = max(nums[i], dp[i-1] + nums[i]).
int max_sub_array(const std::vector<int>& nums) {
  contract::max_sub_array(nums);
  int best = INT_MIN, ending_here = 0;
  for (std::size_t i = 0; i < nums.size(); ++i) {
    ending_here = i == 0 ? nums[0] : std::max(nums[i], ending_here + nums[i]);
    best = std::max(best, ending_here);
  }
  return best;
}

// Greedy matching is optimal here (take each character of s at its first chance); it is the
// feasibility version of the LCS table, where only "does dp reach |s|" matters.
bool is_subsequence(const std::string& s, const std::string& t) {
  std::size_t matched = 0;
  for (char c : t)
    if (matched < s.size() && s[matched] == c) ++matched;
  return matched == s.size();
}

}  // namespace book::dynprog
