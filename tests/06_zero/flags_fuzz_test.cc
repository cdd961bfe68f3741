// Issue 19: chapter 6's zero stage's command line against thousands of seeded hostile argument
// lists (common/testing/flag_fuzz.h): each parses or is refused with a book::Error that says
// something; nothing else is thrown, nothing hangs.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "chapters/06_zero/stage.h"
#include "common/testing/flag_fuzz.h"

namespace {

using book::testing::fuzz_command_line;

TEST(FlagsFuzz, Zero) {
  const auto counts = fuzz_command_line(
      [](const std::vector<std::string>& arguments) {
        std::vector<const char*> argv{"zero"};
        for (const std::string& a : arguments) argv.push_back(a.c_str());
        (void)book::zero::stage::parse_stage_options(static_cast<int>(argv.size()), argv.data());
      },
      {"--tour", "--ranks=1,2", "--stages=ddp,zero1,3", "--precision=bf16", "--steps=2",
       "--layers=2", "--d-model=32", "--heads=4", "--micro-batch=8", "--bucket-kib=64",
       "--psi=7.5e9", "--paper-ranks=64", "--trace=/tmp/z.json", "--help"},
      3000, 606);
  EXPECT_GT(counts.parsed, 0) << "no argument list parsed: the fuzzer tests nothing but refusals";
  EXPECT_GT(counts.refused, 0) << "no argument list was refused";
}

}  // namespace
