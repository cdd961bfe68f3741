// Scaffolding: the busbw stages' command lines (every bad one refused with the reason, never a
// hang: `busbw --max-mib -1` once looped forever), the size sweep, and nccl-tests' arithmetic.
#include <gtest/gtest.h>

#include "chapters/03_collectives/busbw_table.h"
#include "chapters/03_collectives/stage.h"
#include "common/flags.h"
#include "common/testing/expect_error.h"

namespace book::coll {
namespace {

TEST(BusbwTable, SizeSweepMultipliesUpToTheLargestSize) {
  EXPECT_EQ(size_sweep(1024, 16384, 4), (std::vector<std::size_t>{1024, 4096, 16384}));
  EXPECT_EQ(size_sweep(1024, 16383, 4), (std::vector<std::size_t>{1024, 4096}));
  EXPECT_EQ(size_sweep(1, 1, 2), (std::vector<std::size_t>{1}));
  const auto big = size_sweep(1024, kMaxSweepBytes, 4);
  EXPECT_EQ(big.back(), kMaxSweepBytes) << "4^15 KiB = 1 TiB";
  EXPECT_EQ(big.size(), 16u);
}

TEST(BusbwTable, SizeSweepRefusesSweepsThatWouldNotEnd) {
  book::testing::expect_error([] { size_sweep(1024, std::size_t(-1) << 20, 4); },
                              {"size_sweep", "between the first (1024 bytes) and 1024 GiB"});
  book::testing::expect_error([] { size_sweep(1024, 512, 4); }, {"got 512 bytes"});
  book::testing::expect_error([] { size_sweep(0, 4096, 4); }, {"at least 1 byte", "got 0"});
  book::testing::expect_error([] { size_sweep(1024, 4096, 1); }, {"step of at least 2", "and 1"});
}

TEST(BusbwTable, NcclTestsArithmetic) {
  EXPECT_DOUBLE_EQ(algbw_gbs(2'000'000'000, 2.0), 1.0);
  EXPECT_DOUBLE_EQ(all_reduce_bus_factor(4), 1.5);
  EXPECT_DOUBLE_EQ(all_reduce_bus_factor(1), 0.0);
  EXPECT_EQ(format_bytes(64u << 20), "64 MiB");
  EXPECT_EQ(format_bytes(3072), "3 KiB");
  EXPECT_EQ(format_bytes(1000), "1000 B");
  EXPECT_EQ(repetitions_for(1, 1 << 20), 200);
  EXPECT_EQ(repetitions_for(1u << 30, 1 << 20), 1);
  EXPECT_EQ(repetitions_for(1u << 16, 1u << 20), 16);
}

using stage::BusbwStage;
using stage::StageOptions;

StageOptions parse(BusbwStage stage, std::vector<const char*> arguments) {
  arguments.insert(arguments.begin(), "busbw");
  return stage::parse_stage_options(stage, static_cast<int>(arguments.size()), arguments.data());
}

TEST(StageOptions, DefaultsAndTheTourPerStage) {
  const StageOptions plain = parse(BusbwStage::kThreads, {});
  EXPECT_EQ(plain.ranks, 4);
  EXPECT_EQ(plain.max_mib, 256);
  EXPECT_FALSE(plain.tour);
  EXPECT_EQ(plain.trace, "");
  EXPECT_EQ(plain.repetitions, 5);
  EXPECT_EQ(parse(BusbwStage::kThreads, {"--repetitions=7"}).repetitions, 7);
  EXPECT_EQ(parse(BusbwStage::kThreads, {"--tour"}).max_mib, 1);
  EXPECT_EQ(parse(BusbwStage::kThreads, {"--tour", "--max-mib", "8"}).max_mib, 8);
  EXPECT_EQ(parse(BusbwStage::kMpi, {"--tour"}).max_mib, 4);
  EXPECT_EQ(parse(BusbwStage::kNccl, {}).max_mib, 1024);
  EXPECT_EQ(parse(BusbwStage::kNccl, {"--tour"}).max_mib, 64);
  EXPECT_EQ(parse(BusbwStage::kNccl, {"--max-mib=65536"}).max_mib, 65536);
  // Both spellings of a value.
  EXPECT_EQ(parse(BusbwStage::kThreads, {"--ranks=8"}).ranks, 8);
  EXPECT_EQ(parse(BusbwStage::kThreads, {"--ranks", "3", "--trace=/tmp/t.json"}).trace,
            "/tmp/t.json");
}

TEST(StageOptions, BadCommandLinesAreRefusedWithTheReason) {
  using book::testing::expect_error;
  expect_error(
      [] {
        parse(BusbwStage::kThreads, {"--max-mib", "-1"});
      },
      {"--max-mib must be in 1..4096, got -1"});
  expect_error(
      [] {
        parse(BusbwStage::kThreads, {"--max-mib", "99999999999999"});
      },
      {"--max-mib expects an integer, got '99999999999999'", "out of range"});
  expect_error([] { parse(BusbwStage::kThreads, {"--max-mib=0"}); }, {"must be in 1..4096, got 0"});
  expect_error(
      [] {
        parse(BusbwStage::kThreads, {"--ranks", "abc"});
      },
      {"--ranks expects an integer, got 'abc'"});
  expect_error([] { parse(BusbwStage::kThreads, {"--ranks=2000"}); },
               {"--ranks must be in 1..1024, got 2000"});
  expect_error([] { parse(BusbwStage::kThreads, {"--rank=8"}); },
               {"unknown flag --rank", "did you mean --ranks?"});
  expect_error([] { parse(BusbwStage::kThreads, {"--ranks"}); },
               {"--ranks needs a value: write --ranks="});
  expect_error(
      [] {
        parse(BusbwStage::kThreads, {"--ranks", "--tour"});
      },
      {"--ranks needs a value"});
  expect_error([] { parse(BusbwStage::kMpi, {"--ranks=2"}); },
               {"--ranks is the threads stage's", "mpirun -np 2 busbw_mpi"});
  expect_error([] { parse(BusbwStage::kThreads, {"--repetitions=0"}); },
               {"--repetitions must be in 1..100, got 0"});
  expect_error([] { parse(BusbwStage::kMpi, {"--repetitions=3"}); },
               {"--repetitions under MPI is --cluster's"});
  expect_error([] { parse(BusbwStage::kMpi, {"--max-mib=5000"}); },
               {"--max-mib must be in 1..4096, got 5000"});
  EXPECT_THROW(parse(BusbwStage::kThreads, {"--help"}), HelpRequested);
}

}  // namespace
}  // namespace book::coll
