/// @file
/// Chapter 12's exercises: LeetCode dynamic-programming problems, with LeetCode's signatures in
/// standard C++ types. Each function is an exercise whose ID is `dp.<LeetCode number>`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace book::dp {

/// LeetCode 70, Climbing Stairs: the number of ways to climb `n` steps taking 1 or 2 at a time.
/// Exercise dp.70. Requires 1 <= n <= 45 (the answer fits in int).
int climb_stairs(int n);

/// LeetCode 115, Distinct Subsequences: how many distinct subsequences of `s` equal `t`.
/// Exercise dp.115. The count is returned modulo 2^64, so the DP is exact for any input.
std::uint64_t num_distinct(const std::string& s, const std::string& t);

}  // namespace book::dp
