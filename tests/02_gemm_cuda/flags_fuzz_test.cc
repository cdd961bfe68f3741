// Issue 19: chapter 2's ladder stage's command line against thousands of seeded hostile argument
// lists (common/testing/flag_fuzz.h): each parses or is refused with a book::Error that says
// something; nothing else is thrown, nothing hangs.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "chapters/02_gemm_cuda/ladder_options.h"
#include "common/testing/flag_fuzz.h"

namespace {

using book::testing::fuzz_command_line;

TEST(FlagsFuzz, Ladder) {
  const auto counts = fuzz_command_line(
      [](const std::vector<std::string>& arguments) {
        (void)book::gemm_cuda::parse_ladder_options(arguments);
      },
      {"--tour", "--sizes=256,512", "--skip=3", "--help"}, 3000, 291);
  EXPECT_GT(counts.parsed, 0) << "no argument list parsed: the fuzzer tests nothing but refusals";
  EXPECT_GT(counts.refused, 0) << "no argument list was refused";
}

}  // namespace
