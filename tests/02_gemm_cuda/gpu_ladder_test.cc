// cuBLAS and the scaffolding rungs 1, 2, 4, 6, 7 and 9 on the GPU, against the double reference.
// Skips without one. Rung 10 (Hopper) is gpu_hopper_test, a binary of its own: if it hangs or
// leaves a sticky CUDA error, the rungs here have already reported.
//
// The suites are named for tools/gpu/run.sh, which runs them as separate steps with
// --gtest_filter, likeliest failures first: Peer/* and Simt/* (and GpuLaunchers.*), then
// TensorCore/*; GpuSanitize.* is the small run that compute-sanitizer's racecheck and synccheck
// go through.
#include <iostream>

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

std::string rung_name(const ::testing::TestParamInfo<const char*>& info) { return info.param; }

INSTANTIATE_TEST_SUITE_P(Peer, GpuRung, ::testing::Values("cublas_sgemm", "cublas_bf16"),
                         rung_name);
INSTANTIATE_TEST_SUITE_P(Simt, GpuRung,
                         ::testing::Values("naive", "coalesced", "blocktile_1d", "vectorised",
                                           "warptile"),
                         rung_name);
INSTANTIATE_TEST_SUITE_P(TensorCore, GpuRung, ::testing::Values("mma_cp_async"), rung_name);

TEST(GpuLaunchers, CheckTheirArgumentsBeforeTouchingTheGpu) {
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

// Every rung that stages tiles in shared memory, at the sanitizer's small shapes: what
// `compute-sanitizer --tool racecheck` (and synccheck) runs, so that a missing barrier shows as a
// hazard report instead of an error that moves between runs. Also a plain correctness check.
// An exercise rung that is not started is left out (its graded test says so).
TEST(GpuSanitize, SharedMemoryRungsAtSmallAwkwardShapes) {
  BOOK_REQUIRE_GPU();
  for (const std::string& name : testing::shared_memory_rungs()) {
    SCOPED_TRACE(name);
    try {
      testing::expect_rung_correct(name, testing::sanitizer_shapes());
    } catch (const NotImplemented& e) {
      std::cout << "[ note ] " << name << ": exercise " << e.exercise_id()
                << " not started, left out\n";
    }
  }
}

}  // namespace
}  // namespace book::gemm_cuda
