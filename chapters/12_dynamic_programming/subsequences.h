/// @file
/// Chapter 12, section Subsequences: "ending at i" states for one sequence, (i, j) prefix states
/// for two.
#pragma once

#include <string>
#include <vector>

namespace book::dynprog {

/// LeetCode 300, Longest Increasing Subsequence: the length of the longest strictly increasing
/// subsequence. Expected in O(n log n). 0 for an empty input.
/// \exercise{dp.300}
int length_of_lis(const std::vector<int>& nums);

/// LeetCode 354, Russian Doll Envelopes: the most envelopes {width, height} that nest, each
/// strictly smaller in both dimensions than the next. Expected in O(n log n).
/// Requires each envelope to have exactly two entries.
/// \exercise{dp.354}
int max_envelopes(const std::vector<std::vector<int>>& envelopes);

/// LeetCode 674, Longest Continuous Increasing Subsequence: the longest strictly increasing run of
/// adjacent elements. 0 for an empty input.
/// \exercise{dp.674}
int find_length_of_lcis(const std::vector<int>& nums);

/// LeetCode 718, Maximum Length of Repeated Subarray: the longest contiguous run present in both.
/// \exercise{dp.718}
int find_length(const std::vector<int>& nums1, const std::vector<int>& nums2);

/// LeetCode 1143, Longest Common Subsequence of two strings.
/// \exercise{dp.1143}
int longest_common_subsequence(const std::string& text1, const std::string& text2);

/// LeetCode 1035, Uncrossed Lines: the most lines joining equal numbers of `nums1` and `nums2`
/// without two lines crossing or sharing an end (an LCS in disguise).
/// \exercise{dp.1035}
int max_uncrossed_lines(const std::vector<int>& nums1, const std::vector<int>& nums2);

/// LeetCode 53, Maximum Subarray: the largest sum of a non-empty contiguous subarray.
/// Requires a non-empty input every subarray of which sums to an int
/// (the answer and Kadane's running sums then fit).
/// \exercise{dp.53}
int max_sub_array(const std::vector<int>& nums);

/// LeetCode 392, Is Subsequence: whether `s` is a subsequence of `t`.
/// \exercise{dp.392}
bool is_subsequence(const std::string& s, const std::string& t);

}  // namespace book::dynprog
