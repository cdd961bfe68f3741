// The scaffolding rungs' schedules (1, 2, 4, 6, 7, 9, 10), the shared index arithmetic, the
// argument checks and the CPU reference. Runs on any machine; no GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "chapters/02_gemm_cuda/index.h"
#include "chapters/02_gemm_cuda/reference.h"
#include "chapters/02_gemm_cuda/schedule.h"
#include "common/check.h"
#include "common/testing/expect_error.h"
#include "tests/02_gemm_cuda/schedule_checks.h"

namespace book::gemm_cuda {

using ::book::testing::expect_error;
namespace {

using testing::awkward_shapes;
using testing::expect_exact_cover;
using testing::find_rung;

TEST(Index, CooperativeChunksCoverATileOnceInRowOrder) {
  // 256 threads, 128 × 8 tile in float4 chunks: thread t takes row t/2, column (t%2)·4.
  EXPECT_EQ(cooperative_chunk(0, 256, 0, 8, 4).row, 0);
  EXPECT_EQ(cooperative_chunk(5, 256, 0, 8, 4).row, 2);
  EXPECT_EQ(cooperative_chunk(5, 256, 0, 8, 4).col, 4);
  EXPECT_EQ(chunks_per_thread(128, 8, 4, 256), 1);
  EXPECT_EQ(chunks_per_thread(128, 32, 8, 256), 2);
  std::vector<int> seen(16 * 24, 0);
  for (int t = 0; t < 32; ++t)
    for (int i = 0; i < chunks_per_thread(16, 24, 3, 32); ++i) {
      const Coord p = cooperative_chunk(t, 32, i, 24, 3);
      for (int j = 0; j < 3; ++j) ++seen[p.row * 24 + p.col + j];
    }
  for (int e = 0; e < 16 * 24; ++e) EXPECT_EQ(seen[e], 1) << "element " << e;
}

TEST(Index, ChunkKindMatchesTheBoundsAndAlignment) {
  EXPECT_EQ(chunk_kind(0, 0, 10, 12, 4, true), ChunkKind::kVector);
  EXPECT_EQ(chunk_kind(0, 8, 10, 12, 4, true), ChunkKind::kVector);
  EXPECT_EQ(chunk_kind(0, 8, 10, 10, 4, true), ChunkKind::kScalar);   // sticks out
  EXPECT_EQ(chunk_kind(0, 4, 10, 12, 4, false), ChunkKind::kScalar);  // rows not aligned
  EXPECT_EQ(chunk_kind(10, 0, 10, 12, 4, true), ChunkKind::kZero);    // row outside
  EXPECT_EQ(chunk_kind(0, 12, 10, 12, 4, true), ChunkKind::kZero);    // column outside
  EXPECT_EQ(ceil_div(129, 128), 2);
  EXPECT_EQ(ceil_div(128, 128), 1);
}

class ScaffoldRung : public ::testing::TestWithParam<int> {};

TEST_P(ScaffoldRung, CoversEveryTileAndWritesEveryOutputOnce) {
  const auto rungs = ladder_schedules();
  const RungSchedule& rung = find_rung(rungs, GetParam());
  for (GemmShape s : awkward_shapes()) expect_exact_cover(rung, s);
}

INSTANTIATE_TEST_SUITE_P(Rungs, ScaffoldRung, ::testing::Values(1, 2, 4, 6, 7, 9, 10));

class TiledScaffoldRung : public ::testing::TestWithParam<int> {};

TEST_P(TiledScaffoldRung, ReadsEachTileOncePerBlockFullyCoalesced) {
  const auto rungs = ladder_schedules();
  testing::expect_tiled_traffic(find_rung(rungs, GetParam()));
}

INSTANTIATE_TEST_SUITE_P(Rungs, TiledScaffoldRung, ::testing::Values(4, 6, 7, 9, 10));

TEST(Traffic, CoalescingCutsSectorsPerWarpFrom33To5PerK) {
  // 64 × 64 × 16: 128 warps, each doing 16 k steps. Rung 1: 32 rows of A (32 sectors) + one
  // element of B broadcast (1 sector). Rung 2: one A element (1) + 32 consecutive B floats (4).
  const GemmShape s{64, 64, 16};
  const auto rungs = ladder_schedules();
  const Traffic naive = count_traffic(find_rung(rungs, 1), s);
  const Traffic coalesced = count_traffic(find_rung(rungs, 2), s);
  const std::int64_t warp_steps = (64 * 64 / 32) * 16;
  EXPECT_EQ(naive.a_sectors, 32 * warp_steps);
  EXPECT_EQ(naive.b_sectors, 1 * warp_steps);
  EXPECT_EQ(naive.c_sectors, 32 * (64 * 64 / 32));
  EXPECT_EQ(coalesced.a_sectors, 1 * warp_steps);
  EXPECT_EQ(coalesced.b_sectors, 4 * warp_steps);
  EXPECT_EQ(coalesced.c_sectors, 4 * (64 * 64 / 32));
  // Both read every input element once per output it feeds: 2·m·n·k.
  EXPECT_EQ(naive.a_elements + naive.b_elements, 2LL * 64 * 64 * 16);
  EXPECT_EQ(coalesced.a_elements + coalesced.b_elements, 2LL * 64 * 64 * 16);
}

TEST(Traffic, ByBlockEqualsTheFullWalkForTheUntiledRungs) {
  const GemmShape s{64, 96, 24};
  const auto rungs = ladder_schedules();
  for (int number : {1, 2}) {
    const Traffic full = count_traffic(find_rung(rungs, number), s);
    const Traffic block = count_traffic_by_block(find_rung(rungs, number), s);
    EXPECT_EQ(full.a_sectors, block.a_sectors) << "rung " << number;
    EXPECT_EQ(full.b_sectors, block.b_sectors) << "rung " << number;
    EXPECT_EQ(full.c_sectors, block.c_sectors) << "rung " << number;
  }
}

TEST(Traffic, TiledFormulaCountsEachPanelOncePerBlockRowOrColumn) {
  EXPECT_EQ(tiled_input_elements({128, 128, 8}, 128, 128), 2 * 128 * 8);
  EXPECT_EQ(tiled_input_elements({129, 128, 8}, 128, 128), 129 * 8 * 1 + 8 * 128 * 2);
}

TEST(Arguments, RejectNonPositiveShapesAndNullPointers) {
  float x = 0;
  EXPECT_NO_THROW(check_gemm_args(&x, &x, &x, {1, 1, 1}));
  expect_error(
      [&] {
        check_gemm_args(&x, &x, &x, {0, 4, 4});
      },
      {"m=0 n=4 k=4 is not positive", "at least 1"});
  expect_error([&] { check_gemm_args(&x, &x, &x, {4, -1, 4}); }, "n=-1");
  expect_error([&] { check_gemm_args(&x, &x, &x, {3, 0, 5}); }, "m=3 n=0 k=5");
  expect_error(
      [&] {
        check_gemm_args(nullptr, &x, &x, {4, 4, 4});
      },
      {"null pointer (a=0", "device buffers"});
  expect_error([] { random_problem({2, 0, 2}, 1); }, "m=2 n=0 k=2 is not positive");
}

TEST(Reference, Bf16RoundsToNearestEven) {
  EXPECT_EQ(round_to_bf16(1.0f), 1.0f);
  EXPECT_EQ(round_to_bf16(1.0f + 0x1.0p-8f), 1.0f);                  // tie: to even (1.0)
  EXPECT_EQ(round_to_bf16(1.0f + 3 * 0x1.0p-8f), 1.0f + 0x1.0p-6f);  // tie: to even (up)
  EXPECT_EQ(round_to_bf16(1.0f + 0x1.0p-7f + 0x1.0p-9f), 1.0f + 0x1.0p-7f);
  EXPECT_EQ(float_to_bf16(-2.0f), 0xC000);
  EXPECT_TRUE(std::isnan(round_to_bf16(std::numeric_limits<float>::quiet_NaN())));
}

TEST(Reference, MatchesAHandComputedProductAndCatchesPoison) {
  GemmProblem p = random_problem({2, 2, 3}, 7);
  p.a = {1, 2, 3, 4, 5, 6};
  p.b = {1, 0, 0, 1, 1, 1};
  const Reference r = reference_gemm(p, false);
  EXPECT_EQ(r.c, (std::vector<double>{4, 5, 10, 11}));
  std::vector<float> got = {4, 5, 10, 11};
  EXPECT_EQ(compare_gemm(got, r, p.shape, 1.0).bad, 0);
  got[3] = std::numeric_limits<float>::quiet_NaN();
  const Comparison poisoned = compare_gemm(got, r, p.shape, 1.0);
  EXPECT_EQ(poisoned.bad, 1);
  EXPECT_NE(poisoned.first.find("C(1,1)"), std::string::npos) << poisoned.first;
  got[3] = 11.001f;
  EXPECT_EQ(compare_gemm(got, r, p.shape, 1.0).bad, 1) << "an error far above the bound passes";
}

TEST(Reference, InputsAreSeededAndNotZero) {
  const GemmProblem p = random_problem({5, 6, 7}, 42), q = random_problem({5, 6, 7}, 42);
  EXPECT_EQ(p.a, q.a);
  int zeros = 0;
  for (float x : p.a) zeros += x == 0.0f;
  EXPECT_EQ(zeros, 0);
  EXPECT_GT(fp32_dot_bound(1024), 1024 * 0x1.0p-24);  // γ_k = ku / (1 − ku), a bit above ku
  EXPECT_LT(fp32_dot_bound(1024), 1024 * 0x1.0p-24 * 1.001);
}

}  // namespace
}  // namespace book::gemm_cuda
