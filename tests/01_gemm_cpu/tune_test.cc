// The tune stage's pieces: the candidate block sizes obey the cache rules they are derived from,
// and the engine is correct with any block sizes it accepts (the tuner may pick odd ones).
#include "chapters/01_gemm_cpu/tune.h"

#include <gtest/gtest.h>

#include <limits>

#include "common/check.h"
#include "common/testing/expect_error.h"
#include "tests/01_gemm_cpu/checking.h"

namespace book::gemm {
namespace {

using ::book::testing::expect_error;

TEST(BlockCandidates, FollowTheCacheRules) {
  for (const KernelShape shape : {KernelShape{6, 16}, KernelShape{12, 32}})
    for (const auto& [l1, l2] : {std::pair{32L << 10, 1L << 20}, std::pair{48L << 10, 2L << 20},
                                 std::pair{64L << 10, 512L << 10}}) {
      const auto candidates = block_candidates(shape, 2052, l1, l2);
      ASSERT_FALSE(candidates.empty())
          << shape.mr << "x" << shape.nr << " L1 " << l1 << " L2 " << l2;
      for (const BlockSizes& b : candidates) {
        SCOPED_TRACE(describe(b) + " for " + std::to_string(shape.mr) + "x" +
                     std::to_string(shape.nr) + ", L1 " + std::to_string(l1) + ", L2 " +
                     std::to_string(l2));
        EXPECT_LE(shape.mr * b.kc * 4L, l1 / 2) << "A micro-panel must fit half of L1";
        EXPECT_LE(static_cast<long>(b.kc) * b.nc * 4, l2 / 2) << "B block must fit half of L2";
        EXPECT_EQ(b.nc % shape.nr, 0);
        EXPECT_GE(b.nc, shape.nr);
        EXPECT_EQ(b.mc, 2052);
      }
      for (std::size_t i = 1; i < candidates.size(); ++i)  // sorted, no duplicates
        EXPECT_TRUE(std::tie(candidates[i - 1].mc, candidates[i - 1].kc, candidates[i - 1].nc) <
                    std::tie(candidates[i].mc, candidates[i].kc, candidates[i].nc));
    }
}

TEST(BlockCandidates, BiggerL2GivesWiderBBlocks) {
  const auto small = block_candidates({12, 32}, 2052, 48 << 10, 1 << 20);
  const auto big = block_candidates({12, 32}, 2052, 48 << 10, 4 << 20);
  auto widest = [](const std::vector<BlockSizes>& c) {
    int nc = 0;
    for (const auto& b : c) nc = std::max(nc, b.nc);
    return nc;
  };
  EXPECT_GT(widest(big), widest(small));
}

TEST(BlockCandidates, RejectsNonsense) {
  expect_error(
      [] {
        block_candidates({12, 32}, 2052, 0, 1 << 20);
      },
      {"cache sizes must be positive (L1d 0 B", "--l1"});
  expect_error([] { block_candidates({12, 32}, 2052, 48 << 10, -1); }, "L2 -1 B");
  expect_error(
      [] {
        block_candidates({0, 32}, 2052, 48 << 10, 1 << 20);
      },
      "MR and NR must be positive, got 0×32");
  expect_error(
      [] {
        block_candidates({12, 32}, 2048, 48 << 10, 1 << 20);
      },  // not whole panels
      "MC must be a positive multiple of MR = 12, got 2048");
}

TEST(MatmulWithBlocks, CorrectForOddBlockSizes) {
  const KernelShape shape = best_kernel_shape();
  const BlockSizes odd[] = {
      {shape.mr, 1, shape.nr},            // the smallest blocks the engine accepts
      {shape.mr * 3, 7, shape.nr * 2},    // KC that divides nothing
      {shape.mr * 5, 100, shape.nr * 3},  // blocks that cut every dimension mid-way
      default_block_sizes(),
  };
  const testing::Shape shapes[] = {{1, 1, 1}, {97, 131, 211, 3, 1, 2}, {200, 70, 33}};
  for (const BlockSizes& blocks : odd)
    for (const testing::Shape& s : shapes)
      for (int threads : {1, 2}) {
        Rng rng(s.m * 31 + s.n * 7 + s.k);
        const int lda = s.k + s.pad_a, ldb = s.n + s.pad_b, ldc = s.n + s.pad_c;
        const auto a = testing::random_matrix(rng, s.m, lda);
        const auto b = testing::random_matrix(rng, s.k, ldb);
        std::vector<float> c0(static_cast<std::size_t>(s.m) * ldc, testing::kPaddingSentinel);
        for (int i = 0; i < s.m; ++i)
          for (int j = 0; j < s.n; ++j)
            c0[static_cast<std::size_t>(i) * ldc + j] = std::numeric_limits<float>::quiet_NaN();
        auto c = c0;
        matmul_with_blocks(blocks, threads, s.m, s.n, s.k, a.data(), lda, b.data(), ldb, c.data(),
                           ldc);
        testing::expect_matches(
            "matmul_with_blocks(" + describe(blocks) + ", threads=" + std::to_string(threads) +
                ") on " + s.describe(),
            s.m, s.n, s.k, [&](int i, int p) { return a[static_cast<std::size_t>(i) * lda + p]; },
            [&](int p, int j) { return b[static_cast<std::size_t>(p) * ldb + j]; }, 1.0, 0.0, c0, c,
            ldc);
        if (HasFailure()) return;
      }
}

TEST(MatmulWithBlocks, RejectsBlocksTheEngineCannotUse) {
  const KernelShape shape = best_kernel_shape();
  std::vector<float> a(64), b(64), c(64);
  auto call = [&](BlockSizes blocks) {
    matmul_with_blocks(blocks, 1, 8, 8, 8, a.data(), 8, b.data(), 8, c.data(), 8);
  };
  const std::string mr = std::to_string(shape.mr), nr = std::to_string(shape.nr);
  expect_error(
      [&] {
        call({shape.mr + 1, 64, shape.nr});
      },
      "MC must be a positive multiple of MR = " + mr + ", got " + std::to_string(shape.mr + 1));
  expect_error([&] { call({shape.mr, 0, shape.nr}); }, "KC must be >= 1, got 0");
  expect_error(
      [&] {
        call({shape.mr, 64, shape.nr - 1});
      },
      "NC must be a positive multiple of NR = " + nr + ", got " + std::to_string(shape.nr - 1));
  expect_error(
      [&] {
        matmul_with_blocks(default_block_sizes(), 0, 8, 8, 8, a.data(), 8, b.data(), 8, c.data(),
                           8);
      },
      "threads must be >= 1, got 0");
  expect_error(
      [&] {
        matmul_with_blocks(default_block_sizes(), 1, 8, 8, 8, a.data(), 7, b.data(), 8, c.data(),
                           8);
      },
      {"matmul_with_blocks", "lda=7"});
}

}  // namespace
}  // namespace book::gemm
