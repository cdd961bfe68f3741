// Issue 19: chapter 1's ladder and tune stages' command lines against thousands of seeded hostile
// argument lists (common/testing/flag_fuzz.h): each parses or is refused with a book::Error that
// says something; nothing else is thrown, nothing hangs.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "chapters/01_gemm_cpu/ladder_steps.h"
#include "chapters/01_gemm_cpu/tune.h"
#include "common/testing/flag_fuzz.h"

namespace {

using book::testing::fuzz_command_line;

TEST(FlagsFuzz, Ladder) {
  const auto counts = fuzz_command_line(
      [](const std::vector<std::string>& arguments) {
        (void)book::gemm::ladder::parse_options(arguments);
      },
      {"--sizes=64,128", "--big", "--tour", "--slow", "--help"}, 3000, 191);
  EXPECT_GT(counts.parsed, 0) << "no argument list parsed: the fuzzer tests nothing but refusals";
  EXPECT_GT(counts.refused, 0) << "no argument list was refused";
}

TEST(FlagsFuzz, Tune) {
  const auto counts = fuzz_command_line(
      [](const std::vector<std::string>& arguments) {
        (void)book::gemm::parse_tune_options(arguments);
      },
      {"--n=256", "--threads=2", "--l1=32768", "--l2=1048576", "--help"}, 3000, 192);
  EXPECT_GT(counts.parsed, 0) << "no argument list parsed: the fuzzer tests nothing but refusals";
  EXPECT_GT(counts.refused, 0) << "no argument list was refused";
}

}  // namespace
