#include "chapters/12_dynamic_programming/dp.h"
#include "common/check.h"

namespace book::dp {

std::uint64_t num_distinct(const std::string& s, const std::string& t) {
  (void)s, (void)t;
  BOOK_NOT_IMPLEMENTED("dp.115", "exercises/12_dynamic_programming/subsequences.cc",
                       "chapters/12_dynamic_programming/README.md, section Subsequences");
}

}  // namespace book::dp
