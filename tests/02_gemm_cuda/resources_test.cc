// The parser of the compiler's resource report, on a captured excerpt of ptxas -v output.
#include <gtest/gtest.h>

#include <sstream>

#include "chapters/02_gemm_cuda/resources.h"

namespace book::gemm_cuda {
namespace {

constexpr const char* kReport = R"(== chapters/02_gemm_cuda/rung_07_warptile.cu
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'book::gemm_cuda::(anonymous namespace)::warptile_kernel(float const*, float const*, float*, book::gemm_cuda::GemmShape, bool, bool)' for 'sm_80'
ptxas info    : Function properties for book::gemm_cuda::(anonymous namespace)::warptile_kernel(float const*, float const*, float*, book::gemm_cuda::GemmShape, bool, bool)
    8 bytes stack frame, 4 bytes spill stores, 12 bytes spill loads
ptxas info    : Used 125 registers, used 1 barriers, 16384 bytes smem, 390 bytes cmem[0]
ptxas info    : Compiling entry function 'void book::gemm_cuda::(anonymous namespace)::mma_pipeline_kernel<true>(__nv_bfloat16 const*, __nv_bfloat16 const*, float*, book::gemm_cuda::GemmShape, bool, bool)' for 'sm_90'
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 122 registers, used 1 barriers
)";

TEST(Resources, ParsesRegistersSpillsAndSharedMemoryPerKernelAndArch) {
  std::istringstream in(kReport);
  const auto kernels = parse_ptxas_report(in);
  ASSERT_EQ(kernels.size(), 2u);
  EXPECT_EQ(short_kernel_name(kernels[0].kernel), "warptile_kernel");
  EXPECT_EQ(kernels[0].arch, "sm_80");
  EXPECT_EQ(kernels[0].registers, 125);
  EXPECT_EQ(kernels[0].stack_bytes, 8);
  EXPECT_EQ(kernels[0].spill_stores, 4);
  EXPECT_EQ(kernels[0].spill_loads, 12);
  EXPECT_EQ(kernels[0].static_smem, 16384);
  EXPECT_EQ(short_kernel_name(kernels[1].kernel), "mma_pipeline_kernel<true>");
  EXPECT_EQ(kernels[1].arch, "sm_90");
  EXPECT_EQ(kernels[1].registers, 122);
  EXPECT_EQ(kernels[1].static_smem, 0);
}

TEST(Resources, MissingReportGivesAnEmptyPath) {
  EXPECT_EQ(find_resource_report("/nonexistent/dir/ladder"), "");
}

}  // namespace
}  // namespace book::gemm_cuda
