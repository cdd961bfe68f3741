#include <algorithm>
#include <functional>
#include <optional>

#include "chapters/12_dynamic_programming/robbers.h"
#include "common/testing/exercise.h"
#include "tests/12_dynamic_programming/inputs.h"

namespace book::dynprog {
namespace {

using testing::random_ints;
using testing::show;

// Brute force for 198/213: every subset of houses with no two adjacent (circularly for 213).
int best_independent_set(const std::vector<int>& nums, bool circular) {
  const std::size_t n = nums.size();
  int best = 0;
  for (std::uint32_t mask = 0; mask < (1u << n); ++mask) {
    if (mask & (mask >> 1)) continue;
    if (circular && n > 1 && (mask & 1) && (mask >> (n - 1) & 1)) continue;
    int sum = 0;
    for (std::size_t i = 0; i < n; ++i)
      if (mask >> i & 1) sum += nums[i];
    best = std::max(best, sum);
  }
  return best;
}

EXERCISE_TEST("dp.198", HouseRobber, ExamplesAndBruteForce) {
  EXPECT_EQ(rob({1, 2, 3, 1}), 4);
  EXPECT_EQ(rob({2, 7, 9, 3, 1}), 12);
  EXPECT_EQ(rob({}), 0) << "no houses";
  EXPECT_EQ(rob({5}), 5);
  EXPECT_EQ(rob({2, 1, 1, 2}), 4) << "skipping two in a row pays";
  Rng rng(198);
  for (int trial = 0; trial < 3000; ++trial) {
    const auto nums = random_ints(rng, rng.uniform_int(0, 14), 0, 400);
    ASSERT_EQ(rob(nums), best_independent_set(nums, false)) << "nums = " << show(nums);
  }
  EXPECT_EQ(rob(std::vector<int>(100, 400)), 50 * 400) << "100 houses of 400, LeetCode's maximum";
}

EXERCISE_TEST("dp.213", HouseRobberII, ExamplesAndBruteForce) {
  EXPECT_EQ(rob_circular({2, 3, 2}), 3);
  EXPECT_EQ(rob_circular({1, 2, 3, 1}), 4);
  EXPECT_EQ(rob_circular({1, 2, 3}), 3);
  EXPECT_EQ(rob_circular({7}), 7) << "one house, taken alone";
  EXPECT_EQ(rob_circular({4, 9}), 9) << "two houses are adjacent both ways";
  Rng rng(213);
  for (int trial = 0; trial < 3000; ++trial) {
    const auto nums = random_ints(rng, rng.uniform_int(1, 14), 0, 400);
    ASSERT_EQ(rob_circular(nums), best_independent_set(nums, true)) << "nums = " << show(nums);
  }
}

// A random tree in LeetCode's level-order notation: each present node gets a child with
// probability 0.7 on each side, up to `size` nodes.
std::vector<std::optional<int>> random_level_order(Rng& rng, int size) {
  std::vector<std::optional<int>> out{static_cast<int>(rng.uniform_int(0, 100))};
  int present = 1, slots = 2;
  while (present < size && slots > 0) {
    --slots;
    if (rng.uniform() < 0.7) {
      out.push_back(static_cast<int>(rng.uniform_int(0, 100)));
      ++present, slots += 2;
    } else {
      out.push_back(std::nullopt);
    }
  }
  while (!out.back()) out.pop_back();
  return out;
}

// Brute force for 337: every subset of nodes with no parent-child pair.
int best_tree_set(const TreeNode* root) {
  std::vector<const TreeNode*> nodes;
  std::vector<int> parent;
  std::function<void(const TreeNode*, int)> collect = [&](const TreeNode* node, int up) {
    if (!node) return;
    const int index = static_cast<int>(nodes.size());
    nodes.push_back(node), parent.push_back(up);
    collect(node->left.get(), index);
    collect(node->right.get(), index);
  };
  collect(root, -1);
  int best = 0;
  for (std::uint32_t mask = 0; mask < (1u << nodes.size()); ++mask) {
    int sum = 0;
    bool ok = true;
    for (std::size_t i = 0; i < nodes.size() && ok; ++i)
      if (mask >> i & 1) {
        ok = parent[i] < 0 || !(mask >> parent[i] & 1);
        sum += nodes[i]->val;
      }
    if (ok) best = std::max(best, sum);
  }
  return best;
}

EXERCISE_TEST("dp.337", HouseRobberIII, ExamplesAndBruteForce) {
  EXPECT_EQ(rob_tree(build_tree({3, 2, 3, std::nullopt, 3, std::nullopt, 1}).get()), 7);
  EXPECT_EQ(rob_tree(build_tree({3, 4, 5, 1, 3, std::nullopt, 1}).get()), 9);
  EXPECT_EQ(rob_tree(nullptr), 0) << "the empty tree";
  EXPECT_EQ(rob_tree(build_tree({8}).get()), 8);
  EXPECT_EQ(rob_tree(build_tree({4, 1, std::nullopt, 2, std::nullopt, 3}).get()), 7)
      << "a path 4-1-2-3: grandparent and grandchild, skipping two levels";
  Rng rng(337);
  for (int trial = 0; trial < 2000; ++trial) {
    const auto level_order = random_level_order(rng, static_cast<int>(rng.uniform_int(1, 14)));
    const auto root = build_tree(level_order);
    ASSERT_EQ(rob_tree(root.get()), best_tree_set(root.get())) << "tree = " << show(level_order);
  }
}

}  // namespace
}  // namespace book::dynprog
