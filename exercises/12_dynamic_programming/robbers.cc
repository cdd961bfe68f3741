#include "chapters/12_dynamic_programming/robbers.h"
#include "chapters/12_dynamic_programming/contracts.h"
#include "common/check.h"

namespace book::dynprog {

int rob(const std::vector<int>& nums) {
  contract::rob(nums);
  (void)nums;
  BOOK_NOT_IMPLEMENTED("dp.198", "exercises/12_dynamic_programming/robbers.cc",
                       "chapters/12_dynamic_programming/README.md, section Robbers");
}

int rob_circular(const std::vector<int>& nums) {
  contract::rob_circular(nums);
  (void)nums;
  BOOK_NOT_IMPLEMENTED("dp.213", "exercises/12_dynamic_programming/robbers.cc",
                       "chapters/12_dynamic_programming/README.md, section Robbers");
}

int rob_tree(const TreeNode* root) {
  contract::rob_tree(root);
  (void)root;
  BOOK_NOT_IMPLEMENTED("dp.337", "exercises/12_dynamic_programming/robbers.cc",
                       "chapters/12_dynamic_programming/README.md, section Robbers");
}

}  // namespace book::dynprog
