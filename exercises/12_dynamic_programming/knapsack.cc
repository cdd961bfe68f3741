#include "chapters/12_dynamic_programming/knapsack.h"
#include "chapters/12_dynamic_programming/contracts.h"
#include "common/check.h"

namespace book::dynprog {

bool can_partition(const std::vector<int>& nums) {
  contract::can_partition(nums);
  (void)nums;
  BOOK_NOT_IMPLEMENTED("dp.416", "exercises/12_dynamic_programming/knapsack.cc",
                       "chapters/12_dynamic_programming/README.md, section Knapsack");
}

int last_stone_weight_ii(const std::vector<int>& stones) {
  contract::last_stone_weight_ii(stones);
  (void)stones;
  BOOK_NOT_IMPLEMENTED("dp.1049", "exercises/12_dynamic_programming/knapsack.cc",
                       "chapters/12_dynamic_programming/README.md, section Knapsack");
}

int find_target_sum_ways(const std::vector<int>& nums, int target) {
  contract::find_target_sum_ways(nums);
  (void)nums, (void)target;
  BOOK_NOT_IMPLEMENTED("dp.494", "exercises/12_dynamic_programming/knapsack.cc",
                       "chapters/12_dynamic_programming/README.md, section Knapsack");
}

int find_max_form(const std::vector<std::string>& strs, int m, int n) {
  contract::find_max_form(strs, m, n);
  (void)strs, (void)m, (void)n;
  BOOK_NOT_IMPLEMENTED("dp.474", "exercises/12_dynamic_programming/knapsack.cc",
                       "chapters/12_dynamic_programming/README.md, section Knapsack");
}

std::uint64_t change(int amount, const std::vector<int>& coins) {
  contract::change(amount, coins);
  (void)amount, (void)coins;
  BOOK_NOT_IMPLEMENTED("dp.518", "exercises/12_dynamic_programming/knapsack.cc",
                       "chapters/12_dynamic_programming/README.md, section Knapsack");
}

std::uint64_t combination_sum4(const std::vector<int>& nums, int target) {
  contract::combination_sum4(nums, target);
  (void)nums, (void)target;
  BOOK_NOT_IMPLEMENTED("dp.377", "exercises/12_dynamic_programming/knapsack.cc",
                       "chapters/12_dynamic_programming/README.md, section Knapsack");
}

int coin_change(const std::vector<int>& coins, int amount) {
  contract::coin_change(coins, amount);
  (void)coins, (void)amount;
  BOOK_NOT_IMPLEMENTED("dp.322", "exercises/12_dynamic_programming/knapsack.cc",
                       "chapters/12_dynamic_programming/README.md, section Knapsack");
}

int num_squares(int n) {
  contract::num_squares(n);
  (void)n;
  BOOK_NOT_IMPLEMENTED("dp.279", "exercises/12_dynamic_programming/knapsack.cc",
                       "chapters/12_dynamic_programming/README.md, section Knapsack");
}

bool word_break(const std::string& s, const std::vector<std::string>& word_dict) {
  (void)s, (void)word_dict;
  BOOK_NOT_IMPLEMENTED("dp.139", "exercises/12_dynamic_programming/knapsack.cc",
                       "chapters/12_dynamic_programming/README.md, section Knapsack");
}

}  // namespace book::dynprog
