// Scaffolding: the zero stage's command line. Bad input is a book::Error naming the value and
// what to pass instead: an unknown stage, a precision that does not train, an
// N that does not divide the micro-batch; the tour's defaults.
#include <gtest/gtest.h>

#include <vector>

#include "chapters/06_zero/stage.h"
#include "common/testing/expect_error.h"

namespace book::zero::stage {
namespace {

StageOptions parse(std::vector<const char*> args) {
  args.insert(args.begin(), "zero");
  return parse_stage_options(static_cast<int>(args.size()), args.data());
}

TEST(StageOptions, Defaults) {
  const StageOptions o = parse({});
  EXPECT_EQ(o.ranks, (std::vector<int>{1, 2, 3, 4}));
  EXPECT_EQ(o.stages.size(), 4u);  // ddp, zero1, zero2, zero3
  EXPECT_EQ(o.precision, DType::kBF16);
  const StageOptions tour = parse({"--tour"});
  EXPECT_EQ(tour.ranks, (std::vector<int>{2, 4}));
  EXPECT_EQ(tour.steps, 2);
}

TEST(StageOptions, BadInputIsRefusedWithAMessage) {
  book::testing::expect_error(
      [] {
        parse({"--stages", "zero1,zero9"});
      },
      {"unknown ZeRO stage 'zero9'", "valid: 0 or ddp"});
  book::testing::expect_error(
      [] {
        parse({"--ranks", "5"});
      },
      {"--ranks 5 does not divide --micro-batch 12", "e.g. 60"});
  book::testing::expect_error([] { parse({"--precision", "f64"}); }, "not a training precision");
  book::testing::expect_error([] { parse({"--precision", "int8"}); }, "int8");
  book::testing::expect_error([] { parse({"--ranks", "0"}); }, "--ranks");
}

}  // namespace
}  // namespace book::zero::stage
