#include "chapters/12_dynamic_programming/edit_distance.h"
#include "common/check.h"

namespace book::dynprog {

std::uint64_t num_distinct(const std::string& s, const std::string& t) {
  (void)s, (void)t;
  BOOK_NOT_IMPLEMENTED("dp.115", "exercises/12_dynamic_programming/edit_distance.cc",
                       "chapters/12_dynamic_programming/README.md, section The edit family");
}

int min_delete_steps(const std::string& word1, const std::string& word2) {
  (void)word1, (void)word2;
  BOOK_NOT_IMPLEMENTED("dp.583", "exercises/12_dynamic_programming/edit_distance.cc",
                       "chapters/12_dynamic_programming/README.md, section The edit family");
}

int minimum_delete_sum(const std::string& s1, const std::string& s2) {
  (void)s1, (void)s2;
  BOOK_NOT_IMPLEMENTED("dp.712", "exercises/12_dynamic_programming/edit_distance.cc",
                       "chapters/12_dynamic_programming/README.md, section The edit family");
}

int min_distance(const std::string& word1, const std::string& word2) {
  (void)word1, (void)word2;
  BOOK_NOT_IMPLEMENTED("dp.72", "exercises/12_dynamic_programming/edit_distance.cc",
                       "chapters/12_dynamic_programming/README.md, section The edit family");
}

bool is_interleave(const std::string& s1, const std::string& s2, const std::string& s3) {
  (void)s1, (void)s2, (void)s3;
  BOOK_NOT_IMPLEMENTED("dp.97", "exercises/12_dynamic_programming/edit_distance.cc",
                       "chapters/12_dynamic_programming/README.md, section The edit family");
}

}  // namespace book::dynprog
