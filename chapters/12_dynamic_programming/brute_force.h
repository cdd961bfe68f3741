/// @file
/// Brute-force enumerators for the chapter's representative problems: the "first answer" of the
/// five-step method, kept as the tests' reference and the benchmark's peer. Each one enumerates
/// every candidate (subsets, substrings, edit scripts), so it is obviously right and exponentially
/// slow; each refuses inputs large enough to run for hours. Not exercises.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace book::dynprog::brute {

/// The largest input size the subset enumerators accept (2^24 subsets, about a second each).
inline constexpr std::size_t kMaxEnumerated = 24;

/// LeetCode 115 by enumerating all 2^|s| subsets of positions of `s`; counts wrap modulo 2^64.
/// Throws book::Error if |s| > kMaxEnumerated.
std::uint64_t num_distinct(const std::string& s, const std::string& t);

/// LeetCode 1143 by enumerating all 2^|a| subsequences of `a` and keeping the longest that is a
/// subsequence of `b`. Throws book::Error if |a| > kMaxEnumerated.
int longest_common_subsequence(const std::string& a, const std::string& b);

/// LeetCode 300 by enumerating all 2^n subsets and keeping the longest strictly increasing one.
/// Throws book::Error if n > kMaxEnumerated.
int length_of_lis(const std::vector<int>& nums);

/// LeetCode 416 by enumerating all 2^n subsets for one of half the total. Throws book::Error if
/// n > kMaxEnumerated.
bool can_partition(const std::vector<int>& nums);

/// LeetCode 322 by plain recursion over the last coin (no memo): exponential in `amount`.
/// Throws book::Error if amount > 60 or a coin is not positive.
int coin_change(const std::vector<int>& coins, int amount);

/// LeetCode 72 by plain recursion over the last edit (no memo): up to 3^(|a| + |b|) calls.
/// Throws book::Error if |a| + |b| > 22.
int min_distance(const std::string& a, const std::string& b);

/// LeetCode 5 by testing every substring: O(n^3). The leftmost longest palindrome.
std::string longest_palindrome(const std::string& s);

}  // namespace book::dynprog::brute
