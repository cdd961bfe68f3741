/// @file
/// Chapter 12, section Subsequences: "ending at i" states for one sequence, (i, j) prefix states
/// for two, and the edit family (115 counts ways, 583/712/72 count operations, 97 is feasibility).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace book::dp {

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
/// Requires a non-empty input whose partial sums fit in int.
/// \exercise{dp.53}
int max_sub_array(const std::vector<int>& nums);

/// LeetCode 392, Is Subsequence: whether `s` is a subsequence of `t`.
/// \exercise{dp.392}
bool is_subsequence(const std::string& s, const std::string& t);

/// LeetCode 115, Distinct Subsequences: how many distinct subsequences of `s` equal `t`.
/// The count is returned modulo 2^64, so the DP is exact for any input.
/// \exercise{dp.115}
std::uint64_t num_distinct(const std::string& s, const std::string& t);

/// LeetCode 583, Delete Operation for Two Strings: the fewest single-character deletions (from
/// either string) that make them equal.
/// \exercise{dp.583}
int min_delete_steps(const std::string& word1, const std::string& word2);

/// LeetCode 712, Minimum ASCII Delete Sum for Two Strings: the least total ASCII value of the
/// characters deleted to make the strings equal.
/// \exercise{dp.712}
int minimum_delete_sum(const std::string& s1, const std::string& s2);

/// LeetCode 72, Edit Distance: the fewest single-character insertions, deletions and
/// replacements that turn `word1` into `word2`.
/// \exercise{dp.72}
int min_distance(const std::string& word1, const std::string& word2);

/// LeetCode 97, Interleaving String: whether `s3` is formed by interleaving all of `s1` and `s2`
/// (keeping each one's order).
/// \exercise{dp.97}
bool is_interleave(const std::string& s1, const std::string& s2, const std::string& s3);

}  // namespace book::dp
