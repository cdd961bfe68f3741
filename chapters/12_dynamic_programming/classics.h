/// @file
/// Chapter 12, section Harder classics: matching with wildcards, the egg drop turned inside out,
/// weighted interval scheduling (sort + binary search + DP), and splitting an array into balanced
/// parts (the problem behind balancing pipeline stages, chapter 8).
#pragma once

#include <string>
#include <vector>

namespace book::dynprog {

/// LeetCode 10, Regular Expression Matching: whether pattern `p` (letters, '.' for any one
/// character, 'x*' for zero or more x) matches all of `s`. Requires every '*' to
/// follow a letter or '.'.
/// \exercise{dp.10}
bool is_match_regex(const std::string& s, const std::string& p);

/// LeetCode 44, Wildcard Matching: whether `p` (letters, '?' for any one character, '*' for any
/// sequence, possibly empty) matches all of `s`.
/// \exercise{dp.44}
bool is_match_wildcard(const std::string& s, const std::string& p);

/// LeetCode 887, Super Egg Drop: the fewest drops that always find the highest safe floor of `n`
/// with `k` eggs. Expected in O(k log n). Requires k >= 1, n >= 1.
/// \exercise{dp.887}
int super_egg_drop(int k, int n);

/// LeetCode 1235, Maximum Profit in Job Scheduling: the most profit from jobs that do not overlap
/// (a job ending at t and one starting at t are compatible). Expected in
/// O(n log n). Requires three vectors of the same length, start < end, and a total profit that
/// fits in int.
/// \exercise{dp.1235}
int job_scheduling(const std::vector<int>& start_time, const std::vector<int>& end_time,
                   const std::vector<int>& profit);

/// LeetCode 410, Split Array Largest Sum: the smallest possible largest sum when `nums` (values
/// >= 0) is cut into `k` non-empty contiguous parts. Requires 1 <= k <= size and
/// a total that fits in int.
/// \exercise{dp.410}
int split_array(const std::vector<int>& nums, int k);

}  // namespace book::dynprog
