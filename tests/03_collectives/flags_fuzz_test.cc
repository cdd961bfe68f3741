// Issue 19: chapter 3's busbw stages' command lines against thousands of seeded hostile argument
// lists (common/testing/flag_fuzz.h): each parses or is refused with a book::Error that says
// something; nothing else is thrown, nothing hangs.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "chapters/03_collectives/stage.h"
#include "common/testing/flag_fuzz.h"

namespace {

using book::testing::fuzz_command_line;

std::vector<const char*> argv_of(const std::vector<std::string>& arguments) {
  std::vector<const char*> argv{"stage"};
  for (const std::string& a : arguments) argv.push_back(a.c_str());
  return argv;
}

TEST(FlagsFuzz, Busbw) {
  const auto counts = fuzz_command_line(
      [](const std::vector<std::string>& arguments) {
        const auto argv = argv_of(arguments);
        (void)book::coll::stage::parse_stage_options(book::coll::stage::BusbwStage::kThreads,
                                                     static_cast<int>(argv.size()), argv.data());
      },
      {"--max-mib=4", "--tour", "--ranks=4", "--trace=/tmp/t.json", "--help"}, 3000, 391);
  EXPECT_GT(counts.parsed, 0) << "no argument list parsed: the fuzzer tests nothing but refusals";
  EXPECT_GT(counts.refused, 0) << "no argument list was refused";
}

TEST(FlagsFuzz, BusbwMpi) {
  const auto counts = fuzz_command_line(
      [](const std::vector<std::string>& arguments) {
        const auto argv = argv_of(arguments);
        (void)book::coll::stage::parse_stage_options(book::coll::stage::BusbwStage::kMpi,
                                                     static_cast<int>(argv.size()), argv.data());
      },
      {"--max-mib=4", "--tour", "--ranks=4", "--help"}, 3000, 392);
  EXPECT_GT(counts.parsed, 0) << "no argument list parsed: the fuzzer tests nothing but refusals";
  EXPECT_GT(counts.refused, 0) << "no argument list was refused";
}

TEST(FlagsFuzz, BusbwNccl) {
  const auto counts = fuzz_command_line(
      [](const std::vector<std::string>& arguments) {
        const auto argv = argv_of(arguments);
        (void)book::coll::stage::parse_stage_options(book::coll::stage::BusbwStage::kNccl,
                                                     static_cast<int>(argv.size()), argv.data());
      },
      {"--max-mib=64", "--tour", "--help"}, 3000, 393);
  EXPECT_GT(counts.parsed, 0) << "no argument list parsed: the fuzzer tests nothing but refusals";
  EXPECT_GT(counts.refused, 0) << "no argument list was refused";
}

}  // namespace
