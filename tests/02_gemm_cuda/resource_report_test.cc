// The real ptxas report of this build: every scaffolding rung's kernel is there for both
// architectures (rung 10 for sm_90a, the only target it is built for), and none spills
// registers (a spill turns register blocking into local-memory traffic). The exercise kernels
// are left out: they are stubs on the exercise track.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <string>

#include "chapters/02_gemm_cuda/resources.h"

namespace book::gemm_cuda {
namespace {

TEST(ResourceReport, EveryScaffoldingKernelIsCompiledForBothArchitecturesWithoutSpills) {
  const std::string path = find_resource_report("");
  ASSERT_FALSE(path.empty()) << "resource_report.txt is not in the test's runfiles";
  std::ifstream file(path);
  const auto kernels = parse_ptxas_report(file);
  std::set<std::string> seen;
  for (const KernelResources& k : kernels) {
    const std::string name = short_kernel_name(k.kernel);
    seen.insert(name + "@" + k.arch);
    EXPECT_EQ(k.spill_stores, 0) << name << " on " << k.arch << " spills registers";
    EXPECT_EQ(k.spill_loads, 0) << name << " on " << k.arch << " reloads spilled registers";
    EXPECT_GT(k.registers, 0) << name << " on " << k.arch;
  }
  for (const char* name :
       {"naive_kernel", "coalesced_kernel", "blocktile_1d_kernel", "vectorised_kernel",
        "warptile_kernel", "mma_pipeline_kernel<true>", "mma_pipeline_kernel<false>"})
    for (const char* arch : {"sm_80", "sm_90"})
      EXPECT_TRUE(seen.count(std::string(name) + "@" + arch)) << name << " for " << arch;
  EXPECT_TRUE(seen.count("wgmma_tma_kernel@sm_90a")) << "rung 10 for sm_90a";
  EXPECT_FALSE(seen.count("wgmma_tma_kernel@sm_80")) << "rung 10 must not be built for sm_80";
}

}  // namespace
}  // namespace book::gemm_cuda
