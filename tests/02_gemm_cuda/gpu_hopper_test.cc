// Rung 10 (wgmma + TMA, Hopper only) on the GPU, in a binary of its own that tools/gpu/run.sh runs
// after every other rung: a hang (an mbarrier phase that never completes) or a sticky CUDA error
// here cannot take the other rungs' results with it. Skips without a GPU; on a GPU that is not a
// Hopper it checks that the launcher refuses, saying why, then skips.
#include "common/testing/expect_error.h"
#include "common/testing/gpu.h"
#include "tests/02_gemm_cuda/gpu_checks.h"

namespace book::gemm_cuda {
namespace {

// Skips the test unless this is a Hopper; on another GPU, first checks the refusal.
#define REQUIRE_HOPPER()                                                                       \
  do {                                                                                         \
    BOOK_REQUIRE_GPU();                                                                        \
    if (const std::string why = wgmma_unavailable_reason(); !why.empty()) GTEST_SKIP() << why; \
  } while (false)

TEST(GpuHopper, OtherGpusRefuseRung10SayingWhy) {
  BOOK_REQUIRE_GPU();
  const std::string why = wgmma_unavailable_reason();
  if (why.empty()) GTEST_SKIP() << "this is a Hopper: rung 10 runs (the other tests check it)";
  Cublas cublas;
  const std::vector<Rung> rungs = ladder_rungs(cublas);
  const Rung& rung = testing::find_rung(rungs, "wgmma_tma");
  EXPECT_EQ(unavailable_reason(rung), why);
  ::book::testing::expect_error(
      [&] {
        run_poisoned(rung, random_problem({128, 128, 64}, 5));
      },
      {"rung 10 needs a Hopper GPU (sm_90)", "sm_90a alone"});
}

// One small shape with every edge TMA handles: 3 row tiles (the last of 44 rows), 2 column tiles
// (the second only 8 wide: one B box of two, the other not fetched), 5 K tiles (the last 8
// deep), so more than one trip around the 4-stage ring. What compute-sanitizer's memcheck runs.
TEST(GpuHopper, SmallRaggedShapeUnderTma) {
  REQUIRE_HOPPER();
  testing::expect_rung_correct("wgmma_tma", {{300, 136, 264}});
}

// Shapes where TMA is used (k and n multiples of 8) with ragged m, n and k tiles, a long K (many
// trips around the ring, both mbarrier parities many times), and shapes that fall back to
// rung 9; then the common awkward shapes.
TEST(GpuHopper, WgmmaTmaMatchesTheDoubleReference) {
  REQUIRE_HOPPER();
  std::vector<GemmShape> shapes = {{1, 8, 8},        {128, 128, 64}, {129, 520, 1000},
                                   {256, 256, 4096}, {77, 200, 72},  {64, 64, 60},
                                   {65, 63, 64}};
  for (GemmShape s : testing::gpu_shapes()) shapes.push_back(s);
  testing::expect_rung_correct("wgmma_tma", shapes);
}

}  // namespace
}  // namespace book::gemm_cuda
