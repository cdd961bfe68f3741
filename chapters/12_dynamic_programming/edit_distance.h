/// @file
/// Chapter 12, section The edit family: (i, j) prefix states of two strings that ask different
/// things: 115 counts ways, 583, 712 and 72 count operations, 97 is feasibility.
#pragma once

#include <cstdint>
#include <string>

namespace book::dynprog {

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

}  // namespace book::dynprog
