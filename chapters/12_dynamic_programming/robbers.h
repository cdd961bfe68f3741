/// @file
/// Chapter 12, section Robbers: "take it or skip it" along a line, a circle and a tree.
#pragma once

#include <memory>
#include <optional>
#include <vector>

namespace book::dynprog {

/// LeetCode 198, House Robber: the largest sum of `nums` with no two adjacent houses taken.
/// Requires 0 <= nums[i] <= 400 and at most 100 houses; 0 for no houses.
/// \exercise{dp.198}
int rob(const std::vector<int>& nums);

/// LeetCode 213, House Robber II: as rob(), with the houses in a circle (first and last are
/// adjacent). Same limits as rob(); one house is taken alone.
/// \exercise{dp.213}
int rob_circular(const std::vector<int>& nums);

/// A binary-tree node for LeetCode 337 (children owned by their parent).
struct TreeNode {
  int val = 0;                      ///< the money in this house
  std::unique_ptr<TreeNode> left;   ///< left child, or null
  std::unique_ptr<TreeNode> right;  ///< right child, or null
};

/// Builds a tree from LeetCode's level-order notation, e.g. `{3, 2, 3, nullopt, 3, nullopt, 1}`
/// (children of absent nodes are not listed). Returns null for an empty list. Throws book::Error
/// if the root is absent but more values follow, or values are left over with no parent slot.
/// Not an exercise: scaffolding for the tests and the stage.
std::unique_ptr<TreeNode> build_tree(const std::vector<std::optional<int>>& level_order);

/// LeetCode 337, House Robber III: the largest sum of node values with no parent and child both
/// taken. Null is the empty tree (0). Requires 0 <= val <= 10^4, at most 10^4
/// nodes.
/// \exercise{dp.337}
int rob_tree(const TreeNode* root);

}  // namespace book::dynprog
