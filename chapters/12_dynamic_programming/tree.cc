#include <queue>

#include "chapters/12_dynamic_programming/robbers.h"
#include "common/check.h"

namespace book::dynprog {

// LeetCode's notation lists the nodes breadth first; each present node claims the next two
// entries as its children, absent ones claim none.
std::unique_ptr<TreeNode> build_tree(const std::vector<std::optional<int>>& level_order) {
  if (level_order.empty()) return nullptr;
  BOOK_CHECK(level_order[0].has_value() || level_order.size() == 1,
             "level order starts with null (an empty tree) but lists "
                 << level_order.size() - 1 << " more entries; pass {} for an empty tree");
  if (!level_order[0]) return nullptr;
  auto root = std::make_unique<TreeNode>();
  root->val = *level_order[0];
  std::queue<TreeNode*> parents;
  parents.push(root.get());
  std::size_t next = 1;
  while (next < level_order.size()) {
    BOOK_CHECK(!parents.empty(), "level order entry "
                                     << next
                                     << " has no parent slot left: every "
                                        "earlier node's children are already listed (or are null)");
    TreeNode* parent = parents.front();
    parents.pop();
    for (auto* child : {&parent->left, &parent->right}) {
      if (next >= level_order.size()) break;
      if (const auto& value = level_order[next++]) {
        *child = std::make_unique<TreeNode>();
        (*child)->val = *value;
        parents.push(child->get());
      }
    }
  }
  return root;
}

}  // namespace book::dynprog
