// Issue 19: chapter 4's train stage's command line against thousands of seeded hostile argument
// lists (common/testing/flag_fuzz.h): each parses or is refused with a book::Error that says
// something; nothing else is thrown, nothing hangs.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "chapters/04_training_baseline/train_stage.h"
#include "common/testing/flag_fuzz.h"

namespace {

using book::testing::fuzz_command_line;

TEST(FlagsFuzz, Train) {
  const auto counts = fuzz_command_line(
      [](const std::vector<std::string>& arguments) {
        (void)book::train::parse_stage_args(arguments);
      },
      {"--tour", "--steps=50", "--digits=2", "--threads=1", "--precision=bf16", "--help"}, 3000,
      491);
  EXPECT_GT(counts.parsed, 0) << "no argument list parsed: the fuzzer tests nothing but refusals";
  EXPECT_GT(counts.refused, 0) << "no argument list was refused";
}

}  // namespace
