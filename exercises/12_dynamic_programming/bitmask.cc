#include "chapters/12_dynamic_programming/bitmask.h"
#include "chapters/12_dynamic_programming/contracts.h"
#include "common/check.h"

namespace book::dynprog {

bool can_i_win(int max_choosable_integer, int desired_total) {
  contract::can_i_win(max_choosable_integer, desired_total);
  (void)max_choosable_integer, (void)desired_total;
  BOOK_NOT_IMPLEMENTED(
      "dp.464", "exercises/12_dynamic_programming/bitmask.cc",
      "chapters/12_dynamic_programming/README.md, section Bitmask state compression");
}

int count_arrangement(int n) {
  contract::count_arrangement(n);
  (void)n;
  BOOK_NOT_IMPLEMENTED(
      "dp.526", "exercises/12_dynamic_programming/bitmask.cc",
      "chapters/12_dynamic_programming/README.md, section Bitmask state compression");
}

bool can_partition_k_subsets(const std::vector<int>& nums, int k) {
  contract::can_partition_k_subsets(nums, k);
  (void)nums, (void)k;
  BOOK_NOT_IMPLEMENTED(
      "dp.698", "exercises/12_dynamic_programming/bitmask.cc",
      "chapters/12_dynamic_programming/README.md, section Bitmask state compression");
}

int shortest_path_length(const std::vector<std::vector<int>>& graph) {
  contract::shortest_path_length(graph);
  (void)graph;
  BOOK_NOT_IMPLEMENTED(
      "dp.847", "exercises/12_dynamic_programming/bitmask.cc",
      "chapters/12_dynamic_programming/README.md, section Bitmask state compression");
}

std::string shortest_superstring(const std::vector<std::string>& words) {
  contract::shortest_superstring(words);
  (void)words;
  BOOK_NOT_IMPLEMENTED(
      "dp.943", "exercises/12_dynamic_programming/bitmask.cc",
      "chapters/12_dynamic_programming/README.md, section Bitmask state compression");
}

}  // namespace book::dynprog
