#include "chapters/12_dynamic_programming/subsequences.h"
#include "chapters/12_dynamic_programming/contracts.h"
#include "common/check.h"

namespace book::dynprog {

int length_of_lis(const std::vector<int>& nums) {
  (void)nums;
  BOOK_NOT_IMPLEMENTED("dp.300", "exercises/12_dynamic_programming/subsequences.cc",
                       "chapters/12_dynamic_programming/README.md, section Subsequences");
}

int max_envelopes(const std::vector<std::vector<int>>& envelopes) {
  contract::max_envelopes(envelopes);
  (void)envelopes;
  BOOK_NOT_IMPLEMENTED("dp.354", "exercises/12_dynamic_programming/subsequences.cc",
                       "chapters/12_dynamic_programming/README.md, section Subsequences");
}

int find_length_of_lcis(const std::vector<int>& nums) {
  (void)nums;
  BOOK_NOT_IMPLEMENTED("dp.674", "exercises/12_dynamic_programming/subsequences.cc",
                       "chapters/12_dynamic_programming/README.md, section Subsequences");
}

int find_length(const std::vector<int>& nums1, const std::vector<int>& nums2) {
  (void)nums1, (void)nums2;
  BOOK_NOT_IMPLEMENTED("dp.718", "exercises/12_dynamic_programming/subsequences.cc",
                       "chapters/12_dynamic_programming/README.md, section Subsequences");
}

int longest_common_subsequence(const std::string& text1, const std::string& text2) {
  (void)text1, (void)text2;
  BOOK_NOT_IMPLEMENTED("dp.1143", "exercises/12_dynamic_programming/subsequences.cc",
                       "chapters/12_dynamic_programming/README.md, section Subsequences");
}

int max_uncrossed_lines(const std::vector<int>& nums1, const std::vector<int>& nums2) {
  (void)nums1, (void)nums2;
  BOOK_NOT_IMPLEMENTED("dp.1035", "exercises/12_dynamic_programming/subsequences.cc",
                       "chapters/12_dynamic_programming/README.md, section Subsequences");
}

int max_sub_array(const std::vector<int>& nums) {
  contract::max_sub_array(nums);
  (void)nums;
  BOOK_NOT_IMPLEMENTED("dp.53", "exercises/12_dynamic_programming/subsequences.cc",
                       "chapters/12_dynamic_programming/README.md, section Subsequences");
}

bool is_subsequence(const std::string& s, const std::string& t) {
  (void)s, (void)t;
  BOOK_NOT_IMPLEMENTED("dp.392", "exercises/12_dynamic_programming/subsequences.cc",
                       "chapters/12_dynamic_programming/README.md, section Subsequences");
}

}  // namespace book::dynprog
