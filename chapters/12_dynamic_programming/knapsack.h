/// @file
/// Chapter 12, section Knapsack: 0/1 knapsack (each item once: items outer, capacity descending)
/// and unbounded knapsack (items reusable: capacity ascending; items outer counts combinations,
/// capacity outer counts permutations).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace book::dynprog {

/// LeetCode 416, Partition Equal Subset Sum: whether `nums` splits into two parts of equal sum.
/// Requires positive numbers with a total of at most 2^22 (LeetCode: 1 <= nums[i] <= 100, at
/// most 200 numbers; the benchmark goes beyond).
/// \exercise{dp.416}
bool can_partition(const std::vector<int>& nums);

/// LeetCode 1049, Last Stone Weight II: smashing two stones x <= y leaves y - x (nothing if
/// equal); the smallest weight that can be left at the end (0 if none).
/// Requires 1 <= stones[i] <= 100 and at most 30 stones.
/// \exercise{dp.1049}
int last_stone_weight_ii(const std::vector<int>& stones);

/// LeetCode 494, Target Sum: the number of ways to put + or - before each number so that the
/// expression equals `target`. Requires 0 <= nums[i] <= 1000, sum(nums) <= 1000,
/// at most 20 numbers (so the count fits in int).
/// \exercise{dp.494}
int find_target_sum_ways(const std::vector<int>& nums, int target);

/// LeetCode 474, Ones and Zeroes: the size of the largest subset of `strs` (binary strings) with at
/// most `m` zeros and `n` ones in total. Requires m, n >= 0.
/// \exercise{dp.474}
int find_max_form(const std::vector<std::string>& strs, int m, int n);

/// LeetCode 518, Coin Change II: the number of combinations (multisets) of `coins` (each usable any
/// number of times) summing to `amount`. Requires distinct positive coins and
/// 0 <= amount <= 10^7 (the table has amount + 1 entries); the count is returned modulo 2^64.
/// \exercise{dp.518}
std::uint64_t change(int amount, const std::vector<int>& coins);

/// LeetCode 377, Combination Sum IV: the number of ordered sequences of `nums` (reusable) summing
/// to `target` — permutations, despite the name. Requires distinct positive nums
/// and 1 <= target <= 10^7 (the table has target + 1 entries); the count is returned modulo 2^64
/// (LeetCode's int would overflow midway). \exercise{dp.377}
std::uint64_t combination_sum4(const std::vector<int>& nums, int target);

/// LeetCode 322, Coin Change: the fewest `coins` (each usable any number of times) summing to
/// `amount`, or -1 if no combination does. Requires positive coins, 0 <= amount <= 10^7.
/// \exercise{dp.322}
int coin_change(const std::vector<int>& coins, int amount);

/// LeetCode 279, Perfect Squares: the fewest perfect squares summing to `n`.
/// Requires 1 <= n <= 10^6 (the table walks n · sqrt(n) steps).
/// \exercise{dp.279}
int num_squares(int n);

/// LeetCode 139, Word Break: whether `s` is a concatenation of words from `word_dict` (each usable
/// any number of times).
/// \exercise{dp.139}
bool word_break(const std::string& s, const std::vector<std::string>& word_dict);

}  // namespace book::dynprog
