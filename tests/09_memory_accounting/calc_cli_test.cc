// calc's command line: presets and flags reach the Setup, shape flags override a preset, a custom
// shape from flags, and every kind of bad input is an error naming its flag.
#include "chapters/09_memory_accounting/calc_cli.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/testing/expect_error.h"

namespace book::mem {
namespace {

CalcRequest parse(std::vector<std::string> args) {
  args.insert(args.begin(), "calc");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  return parse_calc_flags(static_cast<int>(argv.size()), argv.data());
}

TEST(CalcFlags, PresetAndGrid) {
  const CalcRequest r = parse({"--model", "llama2-70b", "--dp", "8", "--zero", "3", "--tp", "8",
                               "--pp", "4", "--micro-batch", "2", "--seq", "8192",
                               "--sequence-parallel", "--recompute", "selective", "--json"});
  EXPECT_TRUE(r.json);
  EXPECT_EQ(r.setup.shape.n_layer, 80);
  EXPECT_EQ(r.setup.shape.n_kv_head, 8);
  EXPECT_EQ(r.setup.parallel.dp, 8);
  EXPECT_EQ(r.setup.parallel.stage, zero::Stage::kZero3);
  EXPECT_EQ(r.setup.parallel.tp, 8);
  EXPECT_EQ(r.setup.parallel.pp, 4);
  EXPECT_TRUE(r.setup.parallel.sequence_parallel);
  EXPECT_EQ(r.setup.micro_batch, 2);
  EXPECT_EQ(r.setup.seq, 8192);
  EXPECT_EQ(r.setup.recompute, Recomputation::kSelective);
  EXPECT_GT(calculate(r.setup).total(), 0u);
}

TEST(CalcFlags, CustomShapeAndOverrides) {
  const CalcRequest r =
      parse({"--model", "custom", "--layers", "24", "--d-model", "2048", "--heads", "16", "--vocab",
             "50000", "--optimizer", "adam8bit", "--overhead-gib", "1.5"});
  EXPECT_EQ(r.setup.shape.d_ff, 4 * 2048);
  EXPECT_EQ(r.setup.shape.n_kv_head, 16);
  EXPECT_EQ(r.setup.optimizer, Optimizer::kAdam8bit);
  EXPECT_EQ(r.setup.overhead_bytes, 3u << 29);
  EXPECT_EQ(parse({"--model", "llama2-7b", "--layers", "16"}).setup.shape.n_layer, 16);
}

TEST(CalcFlags, BadInputNamesTheFlag) {
  testing::expect_error([] { parse({"--model", "gpt5"}); }, {"--model", "gpt5", "llama2-13b"});
  testing::expect_error([] { parse({"--model", "llama2-7b", "--tp", "5"}); }, "--tp 5");
  testing::expect_error([] { parse({"--model", "gpt3-175b", "--pp", "7"}); }, "--pp 7");
  testing::expect_error([] { parse({"--seq", "-4096"}); }, "--seq");
  testing::expect_error([] { parse({"--micro-batch", "0"}); }, "--micro-batch");
  testing::expect_error([] { parse({"--dp", "-8"}); }, "--dp");
  testing::expect_error([] { parse({"--d-model", "-1"}); }, "--d-model");
  testing::expect_error([] { parse({"--layers", "1000000000"}); }, "--layers");
  testing::expect_error([] { parse({"--zero", "4"}); }, "--zero");
  testing::expect_error([] { parse({"--model", "custom", "--layers", "2"}); }, "--model custom");
  testing::expect_error([] { parse({"--precision", "f64"}); }, "--precision");
  testing::expect_error([] { parse({"--overhead-gib", "-1"}); }, "--overhead-gib");
  testing::expect_error([] { parse({"--tp", "2", "--heads", "33"}); }, "--heads 33");
  // Issue 36: an explicit 0 used to price the preset unchanged.
  for (const char* flag : {"--layers", "--d-model", "--heads", "--kv-heads", "--d-ff", "--vocab"})
    testing::expect_error([&] { parse({"--model", "llama2-7b", flag, "0"}); },
                          std::string(flag) + " must be positive, got 0");
}

TEST(CalcFlags, TableHasEveryCategory) {
  const CalcRequest r = parse({"--model", "book", "--seq", "10"});
  const Table t = breakdown_table(calculate(r.setup));
  ASSERT_EQ(t.rows().size(), 7u);
  EXPECT_EQ(t.rows().back().front(), "total");
  EXPECT_EQ(t.rows().back()[2], std::to_string(calculate(r.setup).total()));
  EXPECT_NE(describe(r.setup).find("book"), std::string::npos);
}

}  // namespace
}  // namespace book::mem
