// Issue 19: chapter 10's kv stage's command line against thousands of seeded hostile argument
// lists (common/testing/flag_fuzz.h): each parses or is refused with a book::Error that says
// something; nothing else is thrown, nothing hangs.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "chapters/10_paged_attention/stage.h"
#include "common/testing/expect_error.h"
#include "common/testing/flag_fuzz.h"

namespace {

using book::testing::fuzz_command_line;

std::vector<const char*> argv_of(const std::vector<std::string>& arguments) {
  std::vector<const char*> argv{"kv"};
  for (const std::string& a : arguments) argv.push_back(a.c_str());
  return argv;
}

book::kv::stage::StageOptions parse(const std::vector<std::string>& arguments) {
  const auto argv = argv_of(arguments);
  return book::kv::stage::parse_stage_options(static_cast<int>(argv.size()), argv.data());
}

TEST(FlagsFuzz, Kv) {
  const auto counts =
      fuzz_command_line([](const std::vector<std::string>& arguments) { (void)parse(arguments); },
                        {"--tour", "--requests=50", "--budget-tokens=4096", "--max-len=512",
                         "--block-size=16", "--seed=3", "--system-prompts=2",
                         "--system-prompt-tokens=100", "--checkpoint=/tmp/c.bin", "--help"},
                        3000, 1010);
  EXPECT_GT(counts.parsed, 0) << "no argument list parsed: the fuzzer tests nothing but refusals";
  EXPECT_GT(counts.refused, 0) << "no argument list was refused";
}

TEST(FlagsFuzz, KvValuesReachTheOptionsAndBadOnesNameTheFlag) {
  const auto o = parse({"--requests=50", "--block-size", "32", "--seed=7"});
  EXPECT_EQ(o.requests, 50);
  EXPECT_EQ(o.block_size, 32);
  EXPECT_EQ(o.seed, 7u);
  EXPECT_TRUE(o.checkpoint.empty()) << "the stage, not the parser, picks the default checkpoint";
  book::testing::expect_error([] { (void)parse({"--block-size=0"}); }, "--block-size");
  book::testing::expect_error([] { (void)parse({"--requests=abc"}); }, "--requests");
}

}  // namespace
