// Scaffolding: the arithmetic of the busbw stages (nccl-tests' table) and the size sweep, which
// refuses sizes that would never end instead of looping (`busbw --max-mib -1` once did).
#include <gtest/gtest.h>

#include "chapters/03_collectives/busbw_table.h"
#include "chapters/03_collectives/testing/collective_testing.h"

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
  testing::expect_error([] { size_sweep(1024, std::size_t(-1) << 20, 4); },
                        {"size_sweep", "between the first (1024 bytes) and 1024 GiB"});
  testing::expect_error([] { size_sweep(1024, 512, 4); }, {"got 512 bytes"});
  testing::expect_error([] { size_sweep(0, 4096, 4); }, {"at least 1 byte", "got 0"});
  testing::expect_error([] { size_sweep(1024, 4096, 1); }, {"step of at least 2", "and 1"});
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

}  // namespace
}  // namespace book::coll
