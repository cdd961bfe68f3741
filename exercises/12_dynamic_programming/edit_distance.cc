#include "chapters/12_dynamic_programming/subsequences.h"
#include "common/check.h"

namespace book::dp {

int min_delete_steps(const std::string& word1, const std::string& word2) {
  (void)word1, (void)word2;
  BOOK_NOT_IMPLEMENTED("dp.583", "exercises/12_dynamic_programming/edit_distance.cc",
                       "chapters/12_dynamic_programming/README.md, section Subsequences");
}

int minimum_delete_sum(const std::string& s1, const std::string& s2) {
  (void)s1, (void)s2;
  BOOK_NOT_IMPLEMENTED("dp.712", "exercises/12_dynamic_programming/edit_distance.cc",
                       "chapters/12_dynamic_programming/README.md, section Subsequences");
}

int min_distance(const std::string& word1, const std::string& word2) {
  (void)word1, (void)word2;
  BOOK_NOT_IMPLEMENTED("dp.72", "exercises/12_dynamic_programming/edit_distance.cc",
                       "chapters/12_dynamic_programming/README.md, section Subsequences");
}

bool is_interleave(const std::string& s1, const std::string& s2, const std::string& s3) {
  (void)s1, (void)s2, (void)s3;
  BOOK_NOT_IMPLEMENTED("dp.97", "exercises/12_dynamic_programming/edit_distance.cc",
                       "chapters/12_dynamic_programming/README.md, section Subsequences");
}

}  // namespace book::dp
