// Scaffolding: shards and the element-wise reductions in every DType (the number formats
// themselves are common/dtype.h's, tested in common/dtype_test.cc).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>

#include "chapters/03_collectives/testing/collective_testing.h"
#include "chapters/03_collectives/types.h"
#include "common/check.h"
#include "common/rng.h"

namespace book::coll {
namespace {

TEST(Shard, FirstShardsTakeTheRemainder) {
  EXPECT_EQ(shard_of(10, 4, 0).offset, 0u);
  EXPECT_EQ(shard_of(10, 4, 0).count, 3u);
  EXPECT_EQ(shard_of(10, 4, 1).offset, 3u);
  EXPECT_EQ(shard_of(10, 4, 2).count, 2u);
  EXPECT_EQ(shard_of(10, 4, 3).offset, 8u);
  EXPECT_EQ(shard_of(2, 5, 4).count, 0u);  // fewer elements than parts: empty shards
  EXPECT_EQ(shard_of(2, 5, 4).offset, 2u);
  for (std::size_t count : {0u, 1u, 7u, 1037u})
    for (int parts : {1, 3, 8}) {
      std::size_t next = 0;
      for (int i = 0; i < parts; ++i) {
        const Shard s = shard_of(count, parts, i);
        EXPECT_EQ(s.offset, next) << count << " in " << parts << " parts, shard " << i;
        next += s.count;
      }
      EXPECT_EQ(next, count);
    }
}

TEST(Shard, RejectsShardsThatDoNotExist) {
  EXPECT_THROW(shard_of(10, 0, 0), Error);
  EXPECT_THROW(shard_of(10, 4, 4), Error);
  EXPECT_THROW(shard_of(10, 4, -1), Error);
}

TEST(ReduceInto, SumMaxInEachTypeAndMismatchErrors) {
  std::vector<float> a = {1, -2, 3}, b = {0.5f, 4, -1};
  reduce_into(std::span<float>(a), std::span<const float>(b), ReduceOp::kMax);
  EXPECT_EQ(a, (std::vector<float>{1, 4, 3}));
  std::vector<BFloat16> x = {to_bf16(1.5f)}, y = {to_bf16(2.25f)};
  reduce_into(std::span<BFloat16>(x), std::span<const BFloat16>(y), ReduceOp::kSum);
  EXPECT_EQ(to_float(x[0]), 3.75f);
  std::vector<Half> h = {to_half(1.0f)};
  scale(std::span<Half>(h), 0.25f);
  EXPECT_EQ(to_float(h[0]), 0.25f);
  std::vector<float> short_one = {1};
  EXPECT_THROW(reduce_into(std::span<float>(a), std::span<const float>(short_one), ReduceOp::kSum),
               Error);
  EXPECT_THROW(copy_into(std::span<float>(a), std::span<const BFloat16>(y)), Error);
}

TEST(ReduceInto, Fp64IsComputedInFp64) {
  // 1 + 2^-40 is not a float: an FP32 detour would lose the 2^-40.
  std::vector<double> a = {1.0, -3.0}, b = {0x1.0p-40, 2.5};
  reduce_into(std::span<double>(a), std::span<const double>(b), ReduceOp::kSum);
  EXPECT_EQ(a, (std::vector<double>{1.0 + 0x1.0p-40, -0.5}));
  reduce_into(std::span<double>(a), std::span<const double>(b), ReduceOp::kMax);
  EXPECT_EQ(a, (std::vector<double>{1.0 + 0x1.0p-40, 2.5}));
  std::vector<double> third = {1.0};
  scale(std::span<double>(third), 1.0 / 3);
  EXPECT_EQ(third[0], 1.0 / 3) << "the mean's factor must not pass through FP32";
  std::vector<float> f = {3.0f};
  scale(std::span<float>(f), 1.0 / 3);
  EXPECT_EQ(f[0], 3.0f * (1.0f / 3.0f)) << "FP32 keeps its FP32 factor, bit for bit";
}

TEST(AllReduce, Fp64EveryAlgorithmWithinFp64Rounding) {
  for (Algorithm algo :
       {Algorithm::kRing, Algorithm::kRingFused, Algorithm::kTree, Algorithm::kNaive}) {
    for (int n : {2, 3, 5}) {
      for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kAvg, ReduceOp::kMax}) {
        const auto expected = testing::reference(1037, DType::kF64, n, 25, op);
        run_ranks(n, [&](Communicator& comm) {
          testing::TypedBuffer data = testing::rank_input(1037, DType::kF64, comm.rank(), 25);
          comm.all_reduce(data.view(), op, algo);
          testing::expect_close(
              data, expected, 0, 1037, testing::tolerance(DType::kF64, n),
              std::string(algorithm_name(algo)) + " " + testing::label(n, 1037, DType::kF64, op));
        });
      }
    }
  }
}

}  // namespace
}  // namespace book::coll
