// The chapter's stated contracts, checked (issue 19). Each message names the function, the
// condition and the value that broke it.
#include "chapters/12_dynamic_programming/contracts.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <set>
#include <utility>

#include "common/check.h"

namespace book::dynprog::contract {
namespace {

// The cap on a table's size where LeetCode's own limit is smaller and the header states none: an
// amount near INT_MAX would overflow `amount + 1` and ask for 8-16 GB.
constexpr long long kTableLimit = 10'000'000;

void in_range(const char* who, const char* what, long long value, long long lo, long long hi,
              const char* why = "") {
  BOOK_CHECK(value >= lo && value <= hi, who << ": " << what << " must be in [" << lo << ", " << hi
                                             << "]" << why << ", got " << value);
}

void each_in_range(const char* who, const char* what, const std::vector<int>& values, int lo,
                   int hi) {
  for (std::size_t i = 0; i < values.size(); ++i)
    BOOK_CHECK(values[i] >= lo && values[i] <= hi, who << ": every " << what << " must be in ["
                                                       << lo << ", " << hi << "], got " << what
                                                       << "[" << i << "] = " << values[i]);
}

void at_most(const char* who, const char* what, std::size_t size, std::size_t most) {
  BOOK_CHECK(size <= most, who << ": at most " << most << " " << what << ", got " << size);
}

long long total(const std::vector<int>& values) {
  long long sum = 0;
  for (int v : values) sum += v;
  return sum;
}

void rectangular(const char* who, const std::vector<std::vector<int>>& grid) {
  BOOK_CHECK(!grid.empty() && !grid[0].empty(), who << ": the grid must not be empty");
  for (std::size_t r = 0; r < grid.size(); ++r)
    BOOK_CHECK(grid[r].size() == grid[0].size(), who << ": the grid must be rectangular, but row "
                                                     << r << " has " << grid[r].size()
                                                     << " cells and row 0 " << grid[0].size());
}

void distinct_positive(const char* who, const char* what, const std::vector<int>& values) {
  each_in_range(who, what, values, 1, INT_MAX);
  BOOK_CHECK(std::set<int>(values.begin(), values.end()).size() == values.size(),
             who << ": the " << what << " values must be distinct");
}

}  // namespace

void fib(int n) { in_range("fib", "n", n, 0, 46, " (F(47) overflows int)"); }

void climb_stairs(int n) { in_range("climb_stairs", "n", n, 1, 45, " (the count fits in int)"); }

void min_cost_climbing_stairs(const std::vector<int>& cost) {
  BOOK_CHECK(cost.size() >= 2,
             "min_cost_climbing_stairs: needs at least 2 steps, got " << cost.size());
  each_in_range("min_cost_climbing_stairs", "cost", cost, 0, 999);
}

void unique_paths(int m, int n) {
  in_range("unique_paths", "m", m, 1, INT_MAX);
  in_range("unique_paths", "n", n, 1, INT_MAX);
  // The table walks every cell: 10^5 × 10^5 would be 10^10 steps (LeetCode stops at 100 × 100).
  in_range("unique_paths", "m × n (the cells the table walks)", static_cast<long long>(m) * n, 1,
           kTableLimit, "; use a smaller grid");
}

void unique_paths_with_obstacles(const std::vector<std::vector<int>>& grid) {
  rectangular("unique_paths_with_obstacles", grid);
  for (const auto& row : grid) each_in_range("unique_paths_with_obstacles", "cell", row, 0, 1);
}

void min_path_sum(const std::vector<std::vector<int>>& grid) {
  rectangular("min_path_sum", grid);
  at_most("min_path_sum", "rows", grid.size(), 200);
  at_most("min_path_sum", "columns", grid[0].size(), 200);
  for (const auto& row : grid) each_in_range("min_path_sum", "cell", row, 0, 200);
}

void integer_break(int n) { in_range("integer_break", "n", n, 2, 58, " (3^19 fits in int)"); }

void num_trees(int n) { in_range("num_trees", "n", n, 1, 19, " (the Catalan number fits in int)"); }

void can_i_win(int max_choosable_integer, int desired_total) {
  in_range("can_i_win", "max_choosable_integer", max_choosable_integer, 1, 20);
  in_range("can_i_win", "desired_total", desired_total, 0, 300);
}

void count_arrangement(int n) { in_range("count_arrangement", "n", n, 1, 15); }

void can_partition_k_subsets(const std::vector<int>& nums, int k) {
  at_most("can_partition_k_subsets", "numbers", nums.size(), 16);
  in_range("can_partition_k_subsets", "k", k, 1, static_cast<long long>(nums.size()),
           " (1 <= k <= the number of values)");
  each_in_range("can_partition_k_subsets", "nums", nums, 1, INT_MAX);
  in_range("can_partition_k_subsets", "the total", total(nums), 0, INT_MAX, " (it fits in int)");
}

void shortest_path_length(const std::vector<std::vector<int>>& graph) {
  in_range("shortest_path_length", "the number of nodes", static_cast<long long>(graph.size()), 1,
           12);
  const int n = static_cast<int>(graph.size());
  for (int u = 0; u < n; ++u)
    for (int v : graph[u])
      BOOK_CHECK(v >= 0 && v < n, "shortest_path_length: node " << u << " lists neighbour " << v
                                                                << ", not a node of 0.." << n - 1);
}

void shortest_superstring(const std::vector<std::string>& words) {
  in_range("shortest_superstring", "the number of words", static_cast<long long>(words.size()), 1,
           12);
  for (std::size_t i = 0; i < words.size(); ++i)
    for (std::size_t j = 0; j < words.size(); ++j)
      BOOK_CHECK(i == j || words[j].find(words[i]) == std::string::npos,
                 "shortest_superstring: no word may be a substring of another, but \""
                     << words[i] << "\" (word " << i << ") is in \"" << words[j] << "\" (word " << j
                     << ")");
}

void is_match_regex(const std::string& p) {
  for (std::size_t i = 0; i < p.size(); ++i)
    BOOK_CHECK(p[i] != '*' || (i > 0 && p[i - 1] != '*'),
               "is_match_regex: every '*' must follow a letter or '.', but the pattern \""
                   << p << "\" has one at position " << i);
}

void super_egg_drop(int k, int n) {
  in_range("super_egg_drop", "k (eggs)", k, 1, INT_MAX);
  in_range("super_egg_drop", "n (floors)", n, 1, INT_MAX);
}

void job_scheduling(const std::vector<int>& start_time, const std::vector<int>& end_time,
                    const std::vector<int>& profit) {
  BOOK_CHECK(start_time.size() == end_time.size() && end_time.size() == profit.size(),
             "job_scheduling: start_time, end_time and profit must have one entry per job, got "
                 << start_time.size() << ", " << end_time.size() << " and " << profit.size());
  for (std::size_t i = 0; i < start_time.size(); ++i)
    BOOK_CHECK(start_time[i] < end_time[i], "job_scheduling: job " << i << " must start before it "
                                                                   << "ends, got start "
                                                                   << start_time[i] << ", end "
                                                                   << end_time[i]);
  each_in_range("job_scheduling", "profit", profit, 0, INT_MAX);
  in_range("job_scheduling", "the total profit", total(profit), 0, INT_MAX, " (it fits in int)");
}

void split_array(const std::vector<int>& nums, int k) {
  in_range("split_array", "k", k, 1, static_cast<long long>(nums.size()),
           " (1 <= k <= the number of values)");
  each_in_range("split_array", "nums", nums, 0, INT_MAX);
  in_range("split_array", "the total", total(nums), 0, INT_MAX, " (it fits in int)");
}

void can_partition(const std::vector<int>& nums) {
  each_in_range("can_partition", "nums", nums, 1, INT_MAX);
  in_range("can_partition", "the total", total(nums), 0, 1 << 22,
           " (the table has total / 2 + 1 entries)");
}

void last_stone_weight_ii(const std::vector<int>& stones) {
  at_most("last_stone_weight_ii", "stones", stones.size(), 30);
  each_in_range("last_stone_weight_ii", "stones", stones, 1, 100);
}

void find_target_sum_ways(const std::vector<int>& nums) {
  at_most("find_target_sum_ways", "numbers", nums.size(), 20);
  each_in_range("find_target_sum_ways", "nums", nums, 0, 1000);
  in_range("find_target_sum_ways", "sum(nums)", total(nums), 0, 1000);
}

void find_max_form(const std::vector<std::string>& strs, int m, int n) {
  in_range("find_max_form", "m (zeros)", m, 0, INT_MAX);
  in_range("find_max_form", "n (ones)", n, 0, INT_MAX);
  for (std::size_t i = 0; i < strs.size(); ++i)
    BOOK_CHECK(
        strs[i].find_first_not_of("01") == std::string::npos,
        "find_max_form: strings must be binary, got strs[" << i << "] = \"" << strs[i] << "\"");
}

void change(int amount, const std::vector<int>& coins) {
  in_range("change", "amount", amount, 0, kTableLimit, " (the table has amount + 1 entries)");
  distinct_positive("change", "coin", coins);
}

void combination_sum4(const std::vector<int>& nums, int target) {
  in_range("combination_sum4", "target", target, 1, kTableLimit,
           " (the table has target + 1 entries)");
  distinct_positive("combination_sum4", "nums", nums);
}

void coin_change(const std::vector<int>& coins, int amount) {
  in_range("coin_change", "amount", amount, 0, kTableLimit, " (the table has amount + 1 entries)");
  each_in_range("coin_change", "coins", coins, 1, INT_MAX);
}

void num_squares(int n) {
  // n · √n steps: 10^6 is about 10^9 of them (LeetCode stops at 10^4).
  in_range("num_squares", "n", n, 1, 1'000'000, " (the table walks n · sqrt(n) steps)");
}

void count_substrings(const std::string& s) {
  at_most("count_substrings", "characters", s.size(), 1000);
}

void max_coins(const std::vector<int>& nums) {
  at_most("max_coins", "balloons", nums.size(), 300);
  each_in_range("max_coins", "nums", nums, 0, 100);
}

void min_score_triangulation(const std::vector<int>& values) {
  in_range("min_score_triangulation", "the number of vertices",
           static_cast<long long>(values.size()), 3, 50);
  each_in_range("min_score_triangulation", "values", values, 1, 100);
}

void rob(const std::vector<int>& nums) {
  at_most("rob", "houses", nums.size(), 100);
  each_in_range("rob", "nums", nums, 0, 400);
}

void rob_tree(const TreeNode* root) {
  std::vector<const TreeNode*> pending;
  if (root != nullptr) pending.push_back(root);
  std::size_t nodes = 0;
  while (!pending.empty()) {
    const TreeNode* node = pending.back();
    pending.pop_back();
    at_most("rob_tree", "nodes", ++nodes, 10000);
    in_range("rob_tree", "a node's value", node->val, 0, 10000);
    if (node->left) pending.push_back(node->left.get());
    if (node->right) pending.push_back(node->right.get());
  }
}

void max_envelopes(const std::vector<std::vector<int>>& envelopes) {
  for (std::size_t i = 0; i < envelopes.size(); ++i)
    BOOK_CHECK(envelopes[i].size() == 2,
               "max_envelopes: each envelope is {width, height}, but "
               "envelope "
                   << i << " has " << envelopes[i].size() << " entries");
}

void max_sub_array(const std::vector<int>& nums) {
  BOOK_CHECK(!nums.empty(), "max_sub_array: needs a non-empty input (the subarray is non-empty)");
  // Kadane adds values to a running subarray sum, so every subarray's sum must fit in int, not
  // only the prefixes: {-2147483647, 2147483647, 2147483647} has prefixes that fit, but its last
  // two values sum to 4294967294. A subarray [i, j) sums to prefix[j] - prefix[i]; the extremes
  // come from the smallest and the largest earlier prefix (the empty prefix 0 counts).
  long long prefix = 0, low = 0, high = 0;
  std::size_t low_at = 0, high_at = 0;
  for (std::size_t j = 1; j <= nums.size(); ++j) {
    prefix += nums[j - 1];
    for (const auto& [earlier, at] : {std::pair{low, low_at}, std::pair{high, high_at}}) {
      const long long sum = prefix - earlier;
      BOOK_CHECK(sum >= INT_MIN && sum <= INT_MAX,
                 "max_sub_array: every subarray's sum must fit in int (the answer would not), but "
                 "values "
                     << at << ".." << j - 1 << " sum to " << sum);
    }
    if (prefix < low) low = prefix, low_at = j;
    if (prefix > high) high = prefix, high_at = j;
  }
}

void rob_circular(const std::vector<int>& nums) {
  at_most("rob_circular", "houses", nums.size(), 100);
  each_in_range("rob_circular", "nums", nums, 0, 400);
}

void stock_prices(const char* who, const std::vector<int>& prices) {
  at_most(who, "days", prices.size(), 30000);
  each_in_range(who, "prices", prices, 0, 10000);
}

void max_profit_k(int k, const std::vector<int>& prices) {
  in_range("max_profit_k", "k", k, 0, INT_MAX);
  stock_prices("max_profit_k", prices);
}

void max_profit_fee(const std::vector<int>& prices, int fee) {
  stock_prices("max_profit_fee", prices);
  in_range("max_profit_fee", "fee", fee, 0, 50000);
}

}  // namespace book::dynprog::contract
