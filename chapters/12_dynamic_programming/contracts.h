/// @file
/// The contracts the chapter's headers state ("Requires ..."), checked. Both tracks call these
/// first, so a call outside a contract is a book::Error naming the function, the condition and
/// the value that broke it, never an answer (LeetCode 887 with n = 0 used to return 1).
/// Scaffolding, not exercises: each returns when its arguments are inside the contract the
/// function's own header states (basics.h, bitmask.h, classics.h, knapsack.h, palindromes.h,
/// robbers.h, stocks.h, subsequences.h), and throws book::Error otherwise.
#pragma once

#include <string>
#include <vector>

#include "chapters/12_dynamic_programming/robbers.h"

/// The checks, one per function with a stated contract, named after it.
namespace book::dynprog::contract {

/// fib: 0 <= n <= 46.
void fib(int n);
/// climb_stairs: 1 <= n <= 45.
void climb_stairs(int n);
/// min_cost_climbing_stairs: at least 2 steps, costs in [0, 999].
void min_cost_climbing_stairs(const std::vector<int>& cost);
/// unique_paths: m, n >= 1, m × n <= 10^7.
void unique_paths(int m, int n);
/// unique_paths_with_obstacles: a non-empty rectangular grid of 0s and 1s.
void unique_paths_with_obstacles(const std::vector<std::vector<int>>& grid);
/// min_path_sum: a non-empty rectangular grid of at most 200 × 200 values in [0, 200].
void min_path_sum(const std::vector<std::vector<int>>& grid);
/// integer_break: 2 <= n <= 58.
void integer_break(int n);
/// num_trees: 1 <= n <= 19.
void num_trees(int n);
/// can_i_win: 1 <= max_choosable_integer <= 20, 0 <= desired_total <= 300.
void can_i_win(int max_choosable_integer, int desired_total);
/// count_arrangement: 1 <= n <= 15.
void count_arrangement(int n);
/// can_partition_k_subsets: 1 <= k <= size <= 16, positive values whose total fits in int.
void can_partition_k_subsets(const std::vector<int>& nums, int k);
/// shortest_path_length: 1 to 12 nodes, every neighbour a node of the graph.
void shortest_path_length(const std::vector<std::vector<int>>& graph);
/// shortest_superstring: 1 to 12 words, none a substring of another.
void shortest_superstring(const std::vector<std::string>& words);
/// is_match_regex: every '*' of the pattern `p` follows a letter or '.'.
void is_match_regex(const std::string& p);
/// super_egg_drop: k >= 1 eggs, n >= 1 floors.
void super_egg_drop(int k, int n);
/// job_scheduling: one start, end and profit per job, start < end, profits >= 0 whose total
/// fits in int.
void job_scheduling(const std::vector<int>& start_time, const std::vector<int>& end_time,
                    const std::vector<int>& profit);
/// split_array: 1 <= k <= size, values >= 0 whose total fits in int.
void split_array(const std::vector<int>& nums, int k);
/// can_partition: positive values with a total of at most 2^22.
void can_partition(const std::vector<int>& nums);
/// last_stone_weight_ii: at most 30 stones of weight 1 to 100.
void last_stone_weight_ii(const std::vector<int>& stones);
/// find_target_sum_ways: at most 20 numbers in [0, 1000] whose sum is at most 1000.
void find_target_sum_ways(const std::vector<int>& nums);
/// find_max_form: m, n >= 0 and binary strings.
void find_max_form(const std::vector<std::string>& strs, int m, int n);
/// change: 0 <= amount <= 10^7, distinct positive coins.
void change(int amount, const std::vector<int>& coins);
/// combination_sum4: distinct positive nums, 1 <= target <= 10^7.
void combination_sum4(const std::vector<int>& nums, int target);
/// coin_change: positive coins, 0 <= amount <= 10^7.
void coin_change(const std::vector<int>& coins, int amount);
/// num_squares: 1 <= n <= 10^6.
void num_squares(int n);
/// count_substrings: at most 1000 characters.
void count_substrings(const std::string& s);
/// max_coins: at most 300 balloons with values in [0, 100].
void max_coins(const std::vector<int>& nums);
/// min_score_triangulation: 3 to 50 vertices with values in [1, 100].
void min_score_triangulation(const std::vector<int>& values);
/// rob: at most 100 houses with values in [0, 400].
void rob(const std::vector<int>& nums);
/// rob_tree: at most 10^4 nodes with values in [0, 10^4].
void rob_tree(const TreeNode* root);
/// max_envelopes: each envelope has exactly two entries.
void max_envelopes(const std::vector<std::vector<int>>& envelopes);
/// max_sub_array: a non-empty input every subarray of which sums to an int.
void max_sub_array(const std::vector<int>& nums);
/// rob_circular: the same limits as rob().
void rob_circular(const std::vector<int>& nums);
/// The stock problems' shared input: at most 3 · 10^4 days, prices in [0, 10^4]; `who` names the
/// function in the message (max_profit_one, _many, _two and _cooldown check only this).
void stock_prices(const char* who, const std::vector<int>& prices);
/// max_profit_k: k >= 0 and stock prices.
void max_profit_k(int k, const std::vector<int>& prices);
/// max_profit_fee: stock prices and 0 <= fee <= 5 · 10^4.
void max_profit_fee(const std::vector<int>& prices, int fee);

}  // namespace book::dynprog::contract
