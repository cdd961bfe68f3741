// Graded where there is a GPU: the exercise kernels (rungs 3, 5, 8) against the double
// reference at awkward sizes, C poisoned with NaN. "Not started" while the launcher is a stub,
// with or without a GPU (so Bazel never calls an untouched stub PASSED); a started exercise is
// skipped without a GPU.
#include "common/testing/exercise.h"
#include "common/testing/gpu.h"
#include "tests/02_gemm_cuda/gpu_checks.h"

namespace book::gemm_cuda {
namespace {

EXERCISE_TEST("cuda_gemm.shared_tile", SharedTileKernel, MatchesTheDoubleReference) {
  BOOK_REQUIRE_GPU_FOR_EXERCISE(testing::launch_shared_tile);
  testing::expect_rung_correct("shared_tile");
}

EXERCISE_TEST("cuda_gemm.register_2d", Register2dKernel, MatchesTheDoubleReference) {
  BOOK_REQUIRE_GPU_FOR_EXERCISE(testing::launch_register_2d);
  testing::expect_rung_correct("register_2d");
}

EXERCISE_TEST("cuda_gemm.wmma", WmmaKernel, MatchesTheDoubleReference) {
  BOOK_REQUIRE_GPU_FOR_EXERCISE(testing::launch_wmma);
  testing::expect_rung_correct("wmma_bf16");
}

}  // namespace
}  // namespace book::gemm_cuda
