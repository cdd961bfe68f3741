// Issue 19: chapter 12's explain stage's command line against thousands of seeded hostile argument
// lists (common/testing/flag_fuzz.h): each parses or is refused with a book::Error that says
// something; nothing else is thrown, nothing hangs.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "chapters/12_dynamic_programming/explain_tables.h"
#include "common/testing/flag_fuzz.h"

namespace {

using book::testing::fuzz_command_line;

TEST(FlagsFuzz, Explain) {
  const auto counts = fuzz_command_line(
      [](const std::vector<std::string>& arguments) {
        (void)book::dynprog::explain::parse(arguments);
      },
      {"115", "rabbbit", "rabbit", "322", "11", "1,2,5", "--tour", "--help", "416", "1,5,11,5"},
      3000, 1291);
  EXPECT_GT(counts.parsed, 0) << "no argument list parsed: the fuzzer tests nothing but refusals";
  EXPECT_GT(counts.refused, 0) << "no argument list was refused";
}

}  // namespace
