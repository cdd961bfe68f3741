#include "chapters/12_dynamic_programming/basics.h"
#include "chapters/12_dynamic_programming/contracts.h"
#include "common/check.h"

namespace book::dynprog {

int fib(int n) {
  contract::fib(n);
  (void)n;
  BOOK_NOT_IMPLEMENTED("dp.509", "exercises/12_dynamic_programming/basics.cc",
                       "chapters/12_dynamic_programming/README.md, section Basics");
}

int climb_stairs(int n) {
  contract::climb_stairs(n);
  (void)n;
  BOOK_NOT_IMPLEMENTED("dp.70", "exercises/12_dynamic_programming/basics.cc",
                       "chapters/12_dynamic_programming/README.md, section Basics");
}

int min_cost_climbing_stairs(const std::vector<int>& cost) {
  contract::min_cost_climbing_stairs(cost);
  (void)cost;
  BOOK_NOT_IMPLEMENTED("dp.746", "exercises/12_dynamic_programming/basics.cc",
                       "chapters/12_dynamic_programming/README.md, section Basics");
}

std::uint64_t unique_paths(int m, int n) {
  contract::unique_paths(m, n);
  (void)m, (void)n;
  BOOK_NOT_IMPLEMENTED("dp.62", "exercises/12_dynamic_programming/basics.cc",
                       "chapters/12_dynamic_programming/README.md, section Basics");
}

std::uint64_t unique_paths_with_obstacles(const std::vector<std::vector<int>>& obstacle_grid) {
  contract::unique_paths_with_obstacles(obstacle_grid);
  (void)obstacle_grid;
  BOOK_NOT_IMPLEMENTED("dp.63", "exercises/12_dynamic_programming/basics.cc",
                       "chapters/12_dynamic_programming/README.md, section Basics");
}

int min_path_sum(const std::vector<std::vector<int>>& grid) {
  contract::min_path_sum(grid);
  (void)grid;
  BOOK_NOT_IMPLEMENTED("dp.64", "exercises/12_dynamic_programming/basics.cc",
                       "chapters/12_dynamic_programming/README.md, section Basics");
}

int integer_break(int n) {
  contract::integer_break(n);
  (void)n;
  BOOK_NOT_IMPLEMENTED("dp.343", "exercises/12_dynamic_programming/basics.cc",
                       "chapters/12_dynamic_programming/README.md, section Basics");
}

int num_trees(int n) {
  contract::num_trees(n);
  (void)n;
  BOOK_NOT_IMPLEMENTED("dp.96", "exercises/12_dynamic_programming/basics.cc",
                       "chapters/12_dynamic_programming/README.md, section Basics");
}

}  // namespace book::dynprog
