// Issue 19: chapter 7's stage's command line against thousands of seeded hostile argument lists
// (common/testing/flag_fuzz.h): each parses or is refused with a book::Error that says something;
// nothing else is thrown, nothing hangs.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "chapters/07_tensor_parallel/tp_stage.h"
#include "common/testing/flag_fuzz.h"

namespace {

using book::testing::fuzz_command_line;

std::vector<const char*> argv_of(const std::vector<std::string>& arguments) {
  std::vector<const char*> argv{"stage"};
  for (const std::string& a : arguments) argv.push_back(a.c_str());
  return argv;
}

TEST(FlagsFuzz, Tp) {
  const auto counts = fuzz_command_line(
      [](const std::vector<std::string>& arguments) {
        const auto argv = argv_of(arguments);
        (void)book::tp::parse_stage_options(static_cast<int>(argv.size()), argv.data());
      },
      {"--tour", "--steps=5", "--degrees=1,2", "--micro-batch=8", "--digits=2", "--layers=2",
       "--d-model=32", "--heads=4", "--experts=4", "--moe-tokens=64", "--balance-steps=3",
       "--help"},
      3000, 791);
  EXPECT_GT(counts.parsed, 0) << "no argument list parsed: the fuzzer tests nothing but refusals";
  EXPECT_GT(counts.refused, 0) << "no argument list was refused";
}

}  // namespace
