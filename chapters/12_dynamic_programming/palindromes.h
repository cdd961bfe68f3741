/// @file
/// Chapter 12, section Palindromes and intervals: dp[i][j] over a substring or an interval, filled
/// by increasing length (or i descending), and the "last one to go" split of interval DP.
#pragma once

#include <string>
#include <vector>

namespace book::dynprog {

/// LeetCode 5, Longest Palindromic Substring. LeetCode accepts any longest one;
/// this book asks for the leftmost of maximal length, so the answer is unique. "" for "".
/// \exercise{dp.5}
std::string longest_palindrome(const std::string& s);

/// LeetCode 647, Palindromic Substrings: how many substrings (counted by position) are
/// palindromes. Requires at most 1000 characters.
/// \exercise{dp.647}
int count_substrings(const std::string& s);

/// LeetCode 516, Longest Palindromic Subsequence: its length.
/// \exercise{dp.516}
int longest_palindrome_subseq(const std::string& s);

/// LeetCode 1312, Minimum Insertion Steps to Make a String Palindrome.
/// \exercise{dp.1312}
int min_insertions(const std::string& s);

/// LeetCode 312, Burst Balloons: bursting balloon i earns nums[left] · nums[i] · nums[right] with
/// its current neighbours (1 beyond the ends); the most coins from bursting them all.
/// Requires 0 <= nums[i] <= 100, at most 300 balloons.
/// \exercise{dp.312}
int max_coins(const std::vector<int>& nums);

/// LeetCode 1039, Minimum Score Triangulation of Polygon: the least sum, over the triangles of a
/// triangulation of the convex polygon with vertex values `values` (in order), of the product of
/// each triangle's three values. Requires at least 3 vertices, values in
/// [1, 100], at most 50 vertices.
/// \exercise{dp.1039}
int min_score_triangulation(const std::vector<int>& values);

}  // namespace book::dynprog
