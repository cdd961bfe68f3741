// Scaffolding: the ddp stage's command line (typed flags, --tour's defaults, clear errors) and the
// run it builds.
#include <gtest/gtest.h>

#include "chapters/05_data_parallel/stage.h"
#include "common/flags.h"
#include "common/testing/expect_error.h"

namespace book::ddp::stage {
namespace {

using book::testing::expect_error;

StageOptions parse(std::vector<const char*> args) {
  args.insert(args.begin(), "ddp");
  return parse_stage_options(static_cast<int>(args.size()), args.data());
}

TEST(StageOptions, DefaultsTourAndFlags) {
  const StageOptions d = parse({});
  EXPECT_EQ(d.ranks, (std::vector<int>{1, 2, 4}));
  EXPECT_EQ(d.rungs.size(), 4u);
  EXPECT_EQ(d.backend, "threads");
  const StageOptions tour = parse({"--tour"});
  EXPECT_EQ(tour.ranks, (std::vector<int>{1, 2}));
  EXPECT_EQ(tour.steps, 4);
  const StageOptions set = parse({"--tour", "--ranks=4,2,2", "--rungs", "flat,4", "--steps", "7"});
  EXPECT_EQ(set.ranks, (std::vector<int>{2, 4})) << "sorted, duplicates removed";
  EXPECT_EQ(set.rungs, (std::vector<Rung>{Rung::kFlat, Rung::kNoSync}));
  EXPECT_EQ(set.steps, 7) << "--tour keeps what was set";
  const DdpOptions run =
      run_options(parse({"--bucket-kib", "64", "--layers", "3"}), Rung::kBuckets);
  EXPECT_EQ(run.bucket_bytes, 64u * 1024);
  EXPECT_EQ(run.train.model.n_layer, 3);
  EXPECT_EQ(run.rung, Rung::kBuckets);
}

TEST(StageOptions, BadCommandLines) {
  expect_error([] { parse({"--ranks", "0"}); }, "--ranks must be in 1..64, got 0");
  expect_error([] { parse({"--rungs", "bucketed"}); }, "--rungs must be one of");
  expect_error([] { parse({"--backend", "nccl"}); }, "--backend must be one of threads, mpi");
  expect_error([] { parse({"--bucket-kib", "0"}); }, "--bucket-kib must be in");
  expect_error([] { parse({"--steps", "abc"}); }, "--steps expects an integer, got 'abc'");
  expect_error([] { parse({"--frobnicate"}); }, "unknown flag --frobnicate");
  // Issue 36: every run is checked before the first (the ladder used to run, and write its
  // table, before the overlap trace at N = 2 failed).
  expect_error([] { parse({"--ranks", "1", "--micro-batch", "1"}); },
               {"not divisible by 2 ranks", "checked before the ladder runs",
                "--analysis=false skips it"});
  expect_error([] { parse({"--ranks", "3", "--micro-batch", "16"}); },
               {"not divisible by 3 ranks", "checked before the ladder runs"});
  EXPECT_NO_THROW(parse({"--ranks", "1", "--micro-batch", "1", "--analysis=false"}));
}

}  // namespace
}  // namespace book::ddp::stage
