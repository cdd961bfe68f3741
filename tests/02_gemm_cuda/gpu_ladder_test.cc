// Every scaffolding rung and cuBLAS, on the GPU, against the double reference. Skips without one;
// rung 10 also skips on a GPU that is not a Hopper (after checking that it refuses to run).
#include "common/testing/expect_error.h"
#include "common/testing/gpu.h"
#include "tests/02_gemm_cuda/gpu_checks.h"

namespace book::gemm_cuda {
namespace {

class GpuRung : public ::testing::TestWithParam<const char*> {};

TEST_P(GpuRung, MatchesTheDoubleReferenceAtAwkwardSizes) {
  BOOK_REQUIRE_GPU();
  testing::expect_rung_correct(GetParam());
}

INSTANTIATE_TEST_SUITE_P(Ladder, GpuRung,
                         ::testing::Values("cublas_sgemm", "cublas_bf16", "naive", "coalesced",
                                           "blocktile_1d", "vectorised", "warptile",
                                           "mma_cp_async"));

// Rung 10: shapes where TMA is used (k and n multiples of 8) with ragged m, n and k tiles, a
// long K (many trips around the 4-stage ring, both mbarrier parities many times), and shapes
// that fall back to rung 9; then the common awkward shapes.
TEST(GpuRung, WgmmaTmaMatchesTheDoubleReferenceOnHopper) {
  BOOK_REQUIRE_GPU();
  if (const std::string why = wgmma_unavailable_reason(); !why.empty()) {
    Cublas cublas;
    for (const Rung& rung : ladder_rungs(cublas))
      if (rung.name == "wgmma_tma") {
        EXPECT_EQ(unavailable_reason(rung), why);
        ::book::testing::expect_error(
            [&] {
              run_poisoned(rung, random_problem({128, 128, 64}, 5));
            },
            {"rung 10 needs a Hopper GPU (sm_90)", "sm_90a alone"});
      }
    GTEST_SKIP() << why;
  }
  std::vector<GemmShape> shapes = {{1, 8, 8},        {128, 128, 64},   {300, 136, 264},
                                   {129, 520, 1000}, {256, 256, 4096}, {77, 200, 72},
                                   {64, 64, 60},     {65, 63, 64}};
  for (GemmShape s : testing::gpu_shapes()) shapes.push_back(s);
  testing::expect_rung_correct("wgmma_tma", shapes);
}

TEST(GpuRung, LaunchersCheckTheirArgumentsBeforeTouchingTheGpu) {
  BOOK_REQUIRE_GPU();
  Cublas cublas;
  for (const Rung& rung : ladder_rungs(cublas)) {
    SCOPED_TRACE(rung.name);
    ::book::testing::expect_error(
        [&] {
          rung.run(nullptr, nullptr, nullptr, {4, 4, 4}, nullptr);
        },
        "GEMM got a null pointer");
  }
}

}  // namespace
}  // namespace book::gemm_cuda
