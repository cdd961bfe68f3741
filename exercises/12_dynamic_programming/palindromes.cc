#include "chapters/12_dynamic_programming/palindromes.h"
#include "chapters/12_dynamic_programming/contracts.h"
#include "common/check.h"

namespace book::dynprog {

std::string longest_palindrome(const std::string& s) {
  (void)s;
  BOOK_NOT_IMPLEMENTED(
      "dp.5", "exercises/12_dynamic_programming/palindromes.cc",
      "chapters/12_dynamic_programming/README.md, section Palindromes and intervals");
}

int count_substrings(const std::string& s) {
  contract::count_substrings(s);
  (void)s;
  BOOK_NOT_IMPLEMENTED(
      "dp.647", "exercises/12_dynamic_programming/palindromes.cc",
      "chapters/12_dynamic_programming/README.md, section Palindromes and intervals");
}

int longest_palindrome_subseq(const std::string& s) {
  (void)s;
  BOOK_NOT_IMPLEMENTED(
      "dp.516", "exercises/12_dynamic_programming/palindromes.cc",
      "chapters/12_dynamic_programming/README.md, section Palindromes and intervals");
}

int min_insertions(const std::string& s) {
  (void)s;
  BOOK_NOT_IMPLEMENTED(
      "dp.1312", "exercises/12_dynamic_programming/palindromes.cc",
      "chapters/12_dynamic_programming/README.md, section Palindromes and intervals");
}

int max_coins(const std::vector<int>& nums) {
  contract::max_coins(nums);
  (void)nums;
  BOOK_NOT_IMPLEMENTED(
      "dp.312", "exercises/12_dynamic_programming/palindromes.cc",
      "chapters/12_dynamic_programming/README.md, section Palindromes and intervals");
}

int min_score_triangulation(const std::vector<int>& values) {
  contract::min_score_triangulation(values);
  (void)values;
  BOOK_NOT_IMPLEMENTED(
      "dp.1039", "exercises/12_dynamic_programming/palindromes.cc",
      "chapters/12_dynamic_programming/README.md, section Palindromes and intervals");
}

}  // namespace book::dynprog
