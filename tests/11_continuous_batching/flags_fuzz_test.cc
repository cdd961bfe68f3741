// Issue 19: chapter 11's serve_bench command line against thousands of seeded hostile argument
// lists (common/testing/flag_fuzz.h): each parses or is refused with a book::Error that says
// something; nothing else is thrown, nothing hangs.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "chapters/11_continuous_batching/stage.h"
#include "common/testing/expect_error.h"
#include "common/testing/flag_fuzz.h"

namespace {

using book::testing::fuzz_command_line;

TEST(FlagsFuzz, ServeBench) {
  const auto counts = fuzz_command_line(
      [](const std::vector<std::string>& arguments) {
        (void)book::serve::stage::parse_options(arguments);
      },
      {"--tour", "--requests=200", "--rate=3.5", "--gamma-shape=0.5", "--seed=4", "--max-batch=32",
       "--token-budget=256", "--kv-blocks=1024", "--slo-ttft-ms=500", "--slo-tpot-ms=20",
       "--checkpoint=x.bin", "--help"},
      3000, 1811);
  EXPECT_GT(counts.parsed, 0) << "no argument list parsed: the fuzzer tests nothing but refusals";
  EXPECT_GT(counts.refused, 0) << "no argument list was refused";
}

TEST(FlagsFuzz, BudgetBelowTheBatchIsRefused) {
  book::testing::expect_error(
      [] {
        book::serve::stage::parse_options({"--max-batch=64", "--token-budget=32"});
      },
      {"--token-budget (32)", "--max-batch (64)"});
  const auto o = book::serve::stage::parse_options({"--tour", "--requests=5000"});
  EXPECT_EQ(o.requests, 300) << "--tour caps the workload";
}

}  // namespace
