// Issue 19: the chapter's functions returned answers outside their stated contracts (LeetCode 887
// with n = 0 returned 1). Each is now a book::Error naming the function, the condition and the
// value. Scaffolding: the checks run before either track's code, so this passes against the
// reference and against the unfinished exercises alike.
#include <gtest/gtest.h>

#include <climits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "chapters/12_dynamic_programming/contracts.h"
#include "chapters/12_dynamic_programming/dp.h"
#include "common/testing/expect_error.h"

namespace book::dynprog {
namespace {

using book::testing::expect_error;

TEST(Contracts, TheIssuesExampleEggDropWithNoFloors) {
  expect_error([] { super_egg_drop(1, 0); }, "super_egg_drop: n (floors) must be in [1, ");
  expect_error([] { super_egg_drop(0, 10); }, "super_egg_drop: k (eggs) must be in [1, ");
  EXPECT_NO_THROW(contract::super_egg_drop(1, 1));
}

TEST(Contracts, NumbersOutsideTheirRangesAreRefusedWithTheValue) {
  expect_error([] { fib(47); }, "fib: n must be in [0, 46] (F(47) overflows int), got 47");
  expect_error([] { fib(-1); }, "got -1");
  EXPECT_NO_THROW(contract::fib(0));
  EXPECT_NO_THROW(contract::fib(46));
  expect_error([] { climb_stairs(0); }, "climb_stairs: n must be in [1, 45]");
  expect_error([] { climb_stairs(46); }, "got 46");
  expect_error([] { unique_paths(0, 3); }, "unique_paths: m must be in [1, ");
  expect_error([] { integer_break(1); }, "integer_break: n must be in [2, 58]");
  expect_error([] { integer_break(59); }, "got 59");
  expect_error([] { num_trees(20); }, "num_trees: n must be in [1, 19]");
  expect_error([] { can_i_win(21, 10); }, "can_i_win: max_choosable_integer must be in [1, 20]");
  expect_error([] { can_i_win(10, 301); }, "desired_total must be in [0, 300], got 301");
  expect_error([] { count_arrangement(16); }, "count_arrangement: n must be in [1, 15], got 16");
  expect_error([] { num_squares(0); }, "num_squares: n must be in [1, ");
  expect_error([] { coin_change({1, 2}, -1); }, "coin_change: amount must be in [0, ");
  expect_error([] { change(-5, {1}); }, "change: amount must be in [0, ");
  expect_error([] { combination_sum4({1, 2}, 0); }, "combination_sum4: target must be in [1, ");
  expect_error([] { find_max_form({"01"}, -1, 2); }, "find_max_form: m (zeros) must be in [0, ");
}

TEST(Contracts, ElementsSizesAndShapesAreRefusedNamingTheElement) {
  expect_error([] { min_cost_climbing_stairs({5}); },
               "min_cost_climbing_stairs: needs at least 2 steps, got 1");
  expect_error(
      [] {
        min_cost_climbing_stairs({5, 1000});
      },
      "every cost must be in [0, 999], got cost[1] = 1000");
  expect_error([] { unique_paths_with_obstacles({}); },
               "unique_paths_with_obstacles: the grid must not be empty");
  expect_error(
      [] {
        unique_paths_with_obstacles({{0, 0}, {0}});
      },
      "the grid must be rectangular, but row 1 has 1 cells and row 0 2");
  expect_error([] { unique_paths_with_obstacles({{0, 2}}); }, "got cell[1] = 2");
  expect_error([] { min_path_sum({{1, -1}}); }, "min_path_sum: every cell must be in [0, 200]");
  expect_error(
      [] {
        can_partition_k_subsets({1, 2}, 3);
      },
      "can_partition_k_subsets: k must be in [1, 2]");
  expect_error([] { can_partition_k_subsets({1, 0}, 1); }, "got nums[1] = 0");
  expect_error([] { can_partition_k_subsets(std::vector<int>(17, 1), 1); },
               "at most 16 numbers, got 17");
  expect_error([] { shortest_path_length({}); }, "the number of nodes must be in [1, 12], got 0");
  expect_error(
      [] {
        shortest_path_length({{1}, {2}});
      },
      "node 1 lists neighbour 2, not a node of 0..1");
  expect_error([] { shortest_superstring({"abc", "b"}); }, "\"b\" (word 1) is in \"abc\" (word 0)");
  expect_error([] { is_match_regex("aa", "*a"); },
               "is_match_regex: every '*' must follow a letter or '.', but the pattern \"*a\" has "
               "one at position 0");
  expect_error([] { is_match_regex("aa", "a**"); }, "at position 2");
  expect_error([] { job_scheduling({1, 2}, {3}, {5, 6}); }, "one entry per job, got 2, 1 and 2");
  expect_error([] { job_scheduling({3}, {3}, {5}); },
               "job 0 must start before it ends, got start 3, end 3");
  expect_error(
      [] {
        job_scheduling({1, 2}, {2, 3}, {INT_MAX, 1});
      },
      "the total profit must be in [0, 2147483647] (it fits in int), got 2147483648");
  expect_error([] { split_array({1, 2}, 3); }, "split_array: k must be in [1, 2]");
  expect_error([] { split_array({1, -2}, 1); }, "got nums[1] = -2");
  expect_error([] { can_partition({1, 0}); }, "can_partition: every nums must be in [1, ");
  expect_error([] { can_partition({1 << 22, 2}); }, "the total must be in [0, 4194304]");
  expect_error([] { last_stone_weight_ii({101}); }, "got stones[0] = 101");
  expect_error([] { last_stone_weight_ii(std::vector<int>(31, 1)); }, "at most 30 stones, got 31");
  expect_error(
      [] {
        find_target_sum_ways({600, 600}, 0);
      },
      "sum(nums) must be in [0, 1000], got 1200");
  expect_error([] { find_max_form({"01", "2"}, 1, 1); }, "strings must be binary, got strs[1]");
  expect_error([] { change(5, {1, 1}); }, "change: the coin values must be distinct");
  expect_error([] { combination_sum4({0, 1}, 3); }, "got nums[0] = 0");
  expect_error([] { coin_change({0}, 3); }, "got coins[0] = 0");
  expect_error([] { count_substrings(std::string(1001, 'a')); },
               "count_substrings: at most 1000 characters, got 1001");
  expect_error([] { max_coins({101}); }, "max_coins: every nums must be in [0, 100]");
  expect_error(
      [] {
        min_score_triangulation({1, 2});
      },
      "the number of vertices must be in [3, 50], got 2");
  expect_error([] { rob({401}); }, "rob: every nums must be in [0, 400], got nums[0] = 401");
  expect_error([] { rob(std::vector<int>(101, 1)); }, "at most 100 houses, got 101");
  expect_error([] { max_envelopes({{1, 2}, {3}}); }, "envelope 1 has 1 entries");
  expect_error([] { max_sub_array({}); }, "max_sub_array: needs a non-empty input");
  expect_error([] { max_sub_array({INT_MAX, 1}); }, "values 0..1 sum to 2147483648");
  EXPECT_NO_THROW(contract::max_sub_array({INT_MAX, -5, 5}));
}

// Review of issue 19: inputs the contracts let through and then overflowed or ran for hours.
TEST(Contracts, MaxSubArrayRefusesASubarrayWhoseSumDoesNotFitEvenWhenThePrefixesDo) {
  // Prefixes 0, -2147483647, 0, 2147483647 all fit in int; values 1..2 sum to
  // 2 · 2147483647 = 4294967294, the true answer, which does not (Kadane's INT_MAX + INT_MAX).
  expect_error(
      [] {
        max_sub_array({-2147483647, 2147483647, 2147483647});
      },
      {"max_sub_array: every subarray's sum must fit in int (the answer would not)",
       "values 1..2 sum to 4294967294"});
  // The most negative subarray counts too: -1 + INT_MIN = -2147483649.
  expect_error([] { max_sub_array({5, -1, INT_MIN}); }, "values 1..2 sum to -2147483649");
  EXPECT_NO_THROW(contract::max_sub_array({INT_MIN}));  // the answer INT_MIN itself fits
}

TEST(Contracts, TableSizesAreCappedBeforeAmountPlusOneOverflowsOrAllocatesGigabytes) {
  expect_error([] { change(INT_MAX, {1}); },
               "change: amount must be in [0, 10000000] (the table has amount + 1 entries), got "
               "2147483647");
  expect_error([] { coin_change({1}, 2000000000); },
               "coin_change: amount must be in [0, 10000000]");
  expect_error([] { combination_sum4({1}, 10000001); },
               "combination_sum4: target must be in [1, 10000000]");
  expect_error([] { num_squares(2147483646); },
               "num_squares: n must be in [1, 1000000] (the table walks n · sqrt(n) steps), got "
               "2147483646");
  expect_error([] { unique_paths(100000, 100000); },
               {"unique_paths: m × n (the cells the table walks) must be in [1, 10000000]",
                "got 10000000000"});
  EXPECT_NO_THROW(contract::change(10000000, {1}));
  EXPECT_NO_THROW(contract::unique_paths(1, 10000000));
  EXPECT_NO_THROW(contract::num_squares(1000000));
}

TEST(Contracts, RobCircularAndTheStockProblemsCheckTheirStatedLimits) {
  expect_error([] { rob_circular({401}); },
               "rob_circular: every nums must be in [0, 400], got nums[0] = 401");
  expect_error([] { rob_circular(std::vector<int>(5, INT_MAX)); }, "got nums[0] = 2147483647");
  expect_error([] { rob_circular(std::vector<int>(101, 1)); }, "at most 100 houses, got 101");
  expect_error(
      [] {
        max_profit_many({0, INT_MAX, 0, INT_MAX});
      },
      "max_profit_many: every prices must be in [0, 10000], got prices[1] = 2147483647");
  expect_error(
      [] {
        max_profit_one({3, -1});
      },
      "max_profit_one: every prices must be in [0, 10000]");
  expect_error([] { max_profit_two({10001}); }, "max_profit_two: every prices");
  expect_error([] { max_profit_cooldown(std::vector<int>(30001, 1)); },
               "max_profit_cooldown: at most 30000 days, got 30001");
  expect_error([] { max_profit_k(-1, {1, 2}); }, "max_profit_k: k must be in [0, ");
  expect_error([] { max_profit_k(2, {1, 20000}); }, "got prices[1] = 20000");
  expect_error(
      [] {
        max_profit_fee({1, 2}, -1);
      },
      "max_profit_fee: fee must be in [0, 50000], got -1");
  expect_error([] { max_profit_fee({1, 2}, INT_MAX); }, "got 2147483647");
  EXPECT_NO_THROW(contract::stock_prices("max_profit_one", std::vector<int>(30000, 10000)));
  EXPECT_NO_THROW(contract::max_profit_fee({}, 50000));
}

TEST(Contracts, ATreeOutsideTheContractIsRefused) {
  const auto negative = build_tree({3, std::nullopt, -1});
  expect_error([&] { rob_tree(negative.get()); },
               "rob_tree: a node's value must be in [0, 10000], got -1");
  auto root = std::make_unique<TreeNode>();  // a path of 10001 nodes, each the left child
  TreeNode* last = root.get();
  for (int i = 1; i <= 10000; ++i) {
    last->left = std::make_unique<TreeNode>();
    last = last->left.get();
  }
  expect_error([&] { rob_tree(root.get()); }, "rob_tree: at most 10000 nodes, got 10001");
  EXPECT_NO_THROW(contract::rob_tree(nullptr));
  // Destroy the long chain iteratively: the default recursive destructor is 10001 frames deep.
  while (root) root = std::move(root->left);
}

}  // namespace
}  // namespace book::dynprog
