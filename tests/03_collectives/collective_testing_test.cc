// Scaffolding: the test helpers that chapters 5-8 use (chapters/03_collectives/testing) check what
// they claim: seeded inputs differ by rank and never repeat a seed's stream, references and
// tolerances are those of the rounded inputs, collect_ranks returns rank order, and the
// replica check catches a difference of one bit.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>

#include "chapters/03_collectives/testing/collective_testing.h"

namespace book::coll {
namespace {

using testing::TypedBuffer;

TEST(CollectiveTesting, RankInputsAreSeededRoundedAndDifferPerRank) {
  for (DType dtype : {DType::kF32, DType::kF64, DType::kBF16, DType::kF16}) {
    const TypedBuffer a = testing::rank_input(257, dtype, 0, 9),
                      b = testing::rank_input(257, dtype, 1, 9);
    const TypedBuffer again = testing::rank_input(257, dtype, 0, 9);
    int same = 0;
    for (std::size_t i = 0; i < 257; ++i) {
      ASSERT_EQ(a.get(i), again.get(i)) << "same seed, same rank, element " << i;
      ASSERT_GE(a.get(i), -1.0);
      ASSERT_LE(a.get(i), 1.0);
      same += a.get(i) == b.get(i);
      TypedBuffer one(1, dtype);
      one.set(0, a.get(i));  // already rounded: stores back exactly
      ASSERT_EQ(one.get(0), a.get(i)) << dtype_name(dtype) << " element " << i;
    }
    EXPECT_LT(same, 5) << dtype_name(dtype) << ": ranks 0 and 1 got nearly the same input";
  }
}

TEST(CollectiveTesting, ReferenceIsTheReductionOfTheRoundedInputs) {
  const auto sum = testing::reference(33, DType::kBF16, 3, 5, ReduceOp::kSum);
  const auto avg = testing::reference(33, DType::kBF16, 3, 5, ReduceOp::kAvg);
  const auto max = testing::reference(33, DType::kBF16, 3, 5, ReduceOp::kMax);
  for (std::size_t i = 0; i < 33; ++i) {
    double s = 0, m = -INFINITY;
    for (int r = 0; r < 3; ++r) {
      const double x = testing::rank_input(33, DType::kBF16, r, 5).get(i);
      s += x;
      m = std::max(m, x);
    }
    EXPECT_EQ(sum[i], s) << i;
    EXPECT_EQ(avg[i], s / 3) << i;
    EXPECT_EQ(max[i], m) << i;
  }
  EXPECT_EQ(testing::tolerance(DType::kF32, 2), 16 * 0x1.0p-24 + 1e-7);
}

TEST(CollectiveTesting, CollectRanksReturnsEachRanksResultInRankOrder) {
  const std::vector<int> ranks =
      testing::collect_ranks(5, [](Communicator& comm) { return 100 + comm.rank(); });
  EXPECT_EQ(ranks, (std::vector<int>{100, 101, 102, 103, 104}));
}

TEST(CollectiveTesting, TheReplicaCheckCatchesOneBit) {
  const std::vector<float> x = {0.25f, -1.5f, 3.0f};
  std::vector<float> y = x;
  y[2] = std::bit_cast<float>(std::bit_cast<std::uint32_t>(y[2]) + 1);  // one ulp
  testing::expect_identical_on_every_rank({x, x, x}, "equal");
  EXPECT_NONFATAL_FAILURE(testing::expect_identical_on_every_rank({x, x, y}, "one ulp"),
                          "element 2 is 3.0000002384185791 on rank 2 but 3 on rank 0");
  EXPECT_NONFATAL_FAILURE(testing::expect_identical_on_every_rank({x, {1.0f}}, "short"),
                          "rank 1 has 1 values, rank 0 has 3");
}

}  // namespace
}  // namespace book::coll
