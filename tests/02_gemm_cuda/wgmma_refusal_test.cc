// Rung 10 runs only on compute capability 9.0. Everywhere else — a machine without a GPU, like
// CI, or a GPU of another generation — its launcher must refuse with a reason a reader can act
// on, before it touches any memory. This test runs on every machine with the CUDA toolkit; on a
// Hopper it skips (the GPU test checks the kernel there).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "chapters/02_gemm_cuda/kernels.h"
#include "common/check.h"
#include "common/testing/expect_error.h"

namespace book::gemm_cuda {
namespace {

TEST(WgmmaRefusal, TheLauncherRefusesAnywhereButHopperAndSaysWhy) {
  const std::string why = wgmma_unavailable_reason();
  if (why.empty()) GTEST_SKIP() << "this is a Hopper: rung 10 runs here (gpu_ladder_test)";
  EXPECT_NE(why.find("rung 10 needs a Hopper GPU (sm_90)"), std::string::npos) << why;
  // Host pointers stand in for device buffers: the launcher must throw before using them.
  alignas(16) static std::uint16_t a[64 * 64], b[64 * 64];
  alignas(16) static float c[64 * 64];
  const auto* a16 = reinterpret_cast<const __nv_bfloat16*>(a);
  const auto* b16 = reinterpret_cast<const __nv_bfloat16*>(b);
  ::book::testing::expect_error(
      [&] {
        gemm_bf16_wgmma(a16, b16, c, {64, 64, 64}, nullptr);
      },
      {why, "wgmma and TMA exist only there"});
  // The argument check still comes first.
  ::book::testing::expect_error(
      [&] {
        gemm_bf16_wgmma(a16, b16, c, {0, 64, 64}, nullptr);
      },
      "m=0 n=64 k=64 is not positive");
}

}  // namespace
}  // namespace book::gemm_cuda
