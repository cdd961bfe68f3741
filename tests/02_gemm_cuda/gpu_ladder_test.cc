// Every scaffolding rung and cuBLAS, on the GPU, against the double reference. Skips without one.
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

TEST(GpuRung, LaunchersCheckTheirArgumentsBeforeTouchingTheGpu) {
  BOOK_REQUIRE_GPU();
  Cublas cublas;
  for (const Rung& rung : ladder_rungs(cublas))
    EXPECT_THROW(rung.run(nullptr, nullptr, nullptr, {4, 4, 4}, nullptr), Error) << rung.name;
}

}  // namespace
}  // namespace book::gemm_cuda
