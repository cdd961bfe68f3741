// calc's command line against thousands of seeded hostile argument lists (common/testing/
// flag_fuzz.h): each parses and is priced, or is refused with a book::Error that says something;
// nothing else is thrown, nothing hangs, no size overflows.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "chapters/09_memory_accounting/calc_cli.h"
#include "common/testing/flag_fuzz.h"

namespace {

TEST(FlagsFuzz, Calc) {
  const auto counts = book::testing::fuzz_command_line(
      [](const std::vector<std::string>& arguments) {
        std::vector<std::string> copy{"calc"};
        copy.insert(copy.end(), arguments.begin(), arguments.end());
        std::vector<char*> argv;
        for (std::string& a : copy) argv.push_back(a.data());
        const book::mem::CalcRequest r =
            book::mem::parse_calc_flags(static_cast<int>(argv.size()), argv.data());
        const book::mem::Breakdown b = book::mem::calculate(r.setup);
        EXPECT_GE(b.total(), b.parameters);  // no wrap-around
      },
      {"--model=llama2-70b", "--dp=8", "--zero=3", "--tp=8", "--pp=4", "--micro-batch=2",
       "--seq=8192", "--sequence-parallel", "--recompute=selective", "--optimizer=adam8bit",
       "--layers=24", "--d-model=2048", "--heads=16", "--kv-heads=8", "--vocab=50000", "--json",
       "--help"},
      3000, 909);
  EXPECT_GT(counts.parsed, 0) << "no argument list parsed: the fuzzer tests nothing but refusals";
  EXPECT_GT(counts.refused, 0) << "no argument list was refused";
}

}  // namespace
