// Issue 19: chapter 5's ddp stage's command line against thousands of seeded hostile argument lists
// (common/testing/flag_fuzz.h): each parses or is refused with a book::Error that says something;
// nothing else is thrown, nothing hangs.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "chapters/05_data_parallel/stage.h"
#include "common/testing/flag_fuzz.h"

namespace {

using book::testing::fuzz_command_line;

std::vector<const char*> argv_of(const std::vector<std::string>& arguments) {
  std::vector<const char*> argv{"stage"};
  for (const std::string& a : arguments) argv.push_back(a.c_str());
  return argv;
}

TEST(FlagsFuzz, Ddp) {
  const auto counts = fuzz_command_line(
      [](const std::vector<std::string>& arguments) {
        const auto argv = argv_of(arguments);
        (void)book::ddp::stage::parse_stage_options(static_cast<int>(argv.size()), argv.data());
      },
      {"--tour", "--backend=threads", "--ranks=1,2", "--rungs=flat,4", "--steps=7", "--warmup=1",
       "--layers=2", "--d-model=32", "--heads=4", "--micro-batch=8", "--accumulation=2",
       "--digits=2", "--bucket-kib=64", "--trace=/tmp/t.json", "--help"},
      3000, 591);
  EXPECT_GT(counts.parsed, 0) << "no argument list parsed: the fuzzer tests nothing but refusals";
  EXPECT_GT(counts.refused, 0) << "no argument list was refused";
}

}  // namespace
