/// @file
/// Chapter 12, section Bitmask state compression: when the state is "which of n <= 20 things are
/// used", encode it as the bits of an integer and index the table by it (2^n states).
#pragma once

#include <string>
#include <vector>

namespace book::dynprog {

/// LeetCode 464, Can I Win: two players alternately pick unused integers from 1 to
/// `max_choosable_integer`, adding to a running total; whoever first makes it reach
/// `desired_total` wins. Whether the first player can force a win. Requires
/// 1 <= max_choosable_integer <= 20 and 0 <= desired_total <= 300 (a total of 0 is won at once).
/// \exercise{dp.464}
bool can_i_win(int max_choosable_integer, int desired_total);

/// LeetCode 526, Beautiful Arrangement: how many permutations p of 1..n have, at every position i
/// (1-based), p[i] divisible by i or i divisible by p[i]. Requires 1 <= n <= 15.
/// \exercise{dp.526}
int count_arrangement(int n);

/// LeetCode 698, Partition to K Equal Sum Subsets: whether `nums` splits into `k` non-empty groups
/// of equal sum. Requires 1 <= k <= size <= 16 and positive values.
/// \exercise{dp.698}
bool can_partition_k_subsets(const std::vector<int>& nums, int k);

/// LeetCode 847, Shortest Path Visiting All Nodes: the fewest edges of a walk (any start and end,
/// nodes and edges reusable) that visits every node of the connected undirected graph given as
/// adjacency lists. Requires 1 <= n <= 12.
/// \exercise{dp.847}
int shortest_path_length(const std::vector<std::vector<int>>& graph);

/// LeetCode 943, Find the Shortest Superstring: a shortest string containing every word as a
/// substring. Requires 1 <= words <= 12 and no word a substring of another; any
/// shortest answer is accepted (the tests check the length and the containment).
/// \exercise{dp.943}
std::string shortest_superstring(const std::vector<std::string>& words);

}  // namespace book::dynprog
