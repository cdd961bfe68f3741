#include "chapters/12_dynamic_programming/classics.h"
#include "chapters/12_dynamic_programming/contracts.h"
#include "common/check.h"

namespace book::dynprog {

bool is_match_regex(const std::string& s, const std::string& p) {
  contract::is_match_regex(p);
  (void)s, (void)p;
  BOOK_NOT_IMPLEMENTED("dp.10", "exercises/12_dynamic_programming/classics.cc",
                       "chapters/12_dynamic_programming/README.md, section Harder classics");
}

bool is_match_wildcard(const std::string& s, const std::string& p) {
  (void)s, (void)p;
  BOOK_NOT_IMPLEMENTED("dp.44", "exercises/12_dynamic_programming/classics.cc",
                       "chapters/12_dynamic_programming/README.md, section Harder classics");
}

int super_egg_drop(int k, int n) {
  contract::super_egg_drop(k, n);
  (void)k, (void)n;
  BOOK_NOT_IMPLEMENTED("dp.887", "exercises/12_dynamic_programming/classics.cc",
                       "chapters/12_dynamic_programming/README.md, section Harder classics");
}

int job_scheduling(const std::vector<int>& start_time, const std::vector<int>& end_time,
                   const std::vector<int>& profit) {
  contract::job_scheduling(start_time, end_time, profit);
  (void)start_time, (void)end_time, (void)profit;
  BOOK_NOT_IMPLEMENTED("dp.1235", "exercises/12_dynamic_programming/classics.cc",
                       "chapters/12_dynamic_programming/README.md, section Harder classics");
}

int split_array(const std::vector<int>& nums, int k) {
  contract::split_array(nums, k);
  (void)nums, (void)k;
  BOOK_NOT_IMPLEMENTED("dp.410", "exercises/12_dynamic_programming/classics.cc",
                       "chapters/12_dynamic_programming/README.md, section Harder classics");
}

}  // namespace book::dynprog
