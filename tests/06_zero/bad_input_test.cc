// Scaffolding: bad options are refused before anything is allocated, each with a message that
// names the value and what to do: an unknown stage, stage 3, a stage number out of range, a batch
// the ranks do not divide, more ranks than parameters, ranks that disagree.
#include <gtest/gtest.h>

#include "chapters/03_collectives/threads.h"
#include "chapters/06_zero/zero_trainer.h"
#include "common/testing/expect_error.h"
#include "tests/06_zero/tiny_zero.h"

namespace book::zero {
namespace {

using testing::tiny_zero_options;

TEST(BadInput, StageNames) {
  EXPECT_EQ(parse_stage("2"), Stage::kZero2);
  EXPECT_EQ(parse_stage("zero1"), Stage::kZero1);
  EXPECT_EQ(parse_stage("ddp"), Stage::kDdp);
  book::testing::expect_error([] { parse_stage("4"); },
                              {"unknown ZeRO stage '4'", "valid: 0 or ddp"});
  book::testing::expect_error([] { parse_stage("fsdp"); }, "unknown ZeRO stage 'fsdp'");
}

TEST(BadInput, StagesOutsideZeroToTwo) {
  ZeroOptions o = tiny_zero_options(Stage::kZero3);
  book::testing::expect_error([&] { resolve(o, 2); },
                              {"stage 3 (FSDP) is not built", "pick 0, 1 or 2"});
  o.stage = static_cast<Stage>(7);
  book::testing::expect_error([&] { resolve(o, 2); }, "ZeRO stage 7 does not exist");
}

TEST(BadInput, BatchNotDivisibleByRanks) {
  book::testing::expect_error([] { resolve(tiny_zero_options(Stage::kZero1), 5); },
                              {"12 sequences is not divisible by 5 ranks", "e.g. 15"});
}

TEST(BadInput, MoreRanksThanParameters) {
  ZeroOptions o = tiny_zero_options(Stage::kZero2);
  o.train.micro_batch = 1 << 16;  // let the batch divide: the parameter count is the limit
  const std::size_t psi = train::ParameterLayout(resolve(o, 1).train.model).total();
  const int n = static_cast<int>(psi) * 2;
  o.train.micro_batch = n;
  book::testing::expect_error([&] { resolve(o, n); }, {std::to_string(n) + " ranks but only " +
                                                           std::to_string(psi) + " parameters",
                                                       "use at most " + std::to_string(psi)});
}

TEST(BadInput, RanksWithDifferentOptions) {
  book::testing::expect_error(
      [] {
        coll::run_ranks(2, [](coll::Communicator& comm) {
          ZeroOptions o = tiny_zero_options(comm.rank() == 0 ? Stage::kZero1 : Stage::kZero2);
          ZeroTrainer trainer(comm, o);
        });
      },
      "rank 1's options differ from rank 0's");
}

}  // namespace
}  // namespace book::zero
