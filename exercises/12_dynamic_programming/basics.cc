#include "chapters/12_dynamic_programming/dp.h"
#include "common/check.h"

namespace book::dp {

int climb_stairs(int n) {
  (void)n;
  BOOK_NOT_IMPLEMENTED("dp.70", "exercises/12_dynamic_programming/basics.cc",
                       "chapters/12_dynamic_programming/README.md, section Basics");
}

}  // namespace book::dp
