#include <algorithm>
#include <utility>

#include "chapters/12_dynamic_programming/contracts.h"
#include "chapters/12_dynamic_programming/robbers.h"

namespace book::dynprog {

namespace {
// dp[i] = best of the first i houses = max(dp[i-1] (skip house i-1), dp[i-2] + house i-1).
int rob_range(const std::vector<int>& nums, std::size_t first, std::size_t last) {
  int before = 0, best = 0;
  for (std::size_t i = first; i < last; ++i) {
    const int next = std::max(best, before + nums[i]);
    before = best;
    best = next;
  }
  return best;
}

// The two answers for a subtree: {best with its root robbed, best with its root skipped}.
std::pair<int, int> rob_subtree(const TreeNode* node) {
  if (!node) return {0, 0};
  const auto [left_taken, left_skipped] = rob_subtree(node->left.get());
  const auto [right_taken, right_skipped] = rob_subtree(node->right.get());
  const int taken = node->val + left_skipped + right_skipped;
  const int skipped = std::max(left_taken, left_skipped) + std::max(right_taken, right_skipped);
  return {taken, skipped};
}
}  // namespace

int rob(const std::vector<int>& nums) {
  contract::rob(nums);
  return rob_range(nums, 0, nums.size());
}

// The first and the last house are never both robbed: the best of the line without the last and
// the line without the first.
int rob_circular(const std::vector<int>& nums) {
  contract::rob_circular(nums);
  if (nums.size() == 1) return nums[0];
  if (nums.empty()) return 0;
  return std::max(rob_range(nums, 0, nums.size() - 1), rob_range(nums, 1, nums.size()));
}

// Tree DP: post-order, each node returning two states instead of one number. (Recursion depth is
// the tree's height; LeetCode's 10^4 nodes fit in a default stack.)
int rob_tree(const TreeNode* root) {
  contract::rob_tree(root);
  const auto [taken, skipped] = rob_subtree(root);
  return std::max(taken, skipped);
}

}  // namespace book::dynprog
