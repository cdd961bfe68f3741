// The GPU run's preflight probe (tools/gpu/run.sh runs it first, in about a second): what CUDA
// sees on this machine, in lines run.sh reads —
//
//   driver: CUDA 13.0            (the newest runtime the installed driver supports; "none")
//   runtime: CUDA 13.0           (the static cudart every packed binary carries)
//   devices: 1                   (or "devices: 0 (why)")
//   device 0: NVIDIA H200, sm_90, 132 SMs, 143771 MiB, 60 MiB L2
//   warning: ...                 (a driver older than the runtime: every CUDA call would fail)
//
// Linked like the packed tests (cudart static), so if this runs, their CUDA can start.
#include <cuda_runtime_api.h>

#include <cstdio>
#include <string>

#include "common/cuda.h"

namespace {

std::string cuda_version(int v) {
  if (v <= 0) return "none (no NVIDIA driver loaded)";
  return "CUDA " + std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

}  // namespace

int main() {
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);  // 0, not an error, when there is no driver
  cudaRuntimeGetVersion(&runtime);
  std::printf("driver: %s\n", cuda_version(driver).c_str());
  std::printf("runtime: %s\n", cuda_version(runtime).c_str());
  if (driver > 0 && driver < runtime)
    std::printf(
        "warning: the driver supports %s, older than the %s runtime in the binaries: "
        "every CUDA call fails with cudaErrorInsufficientDriver\n",
        cuda_version(driver).c_str(), cuda_version(runtime).c_str());
  const int count = book::cuda::device_count();
  if (count == 0) {
    std::printf("devices: 0 (%s)\n", book::cuda::no_device_reason().c_str());
    return 0;
  }
  std::printf("devices: %d\n", count);
  for (int d = 0; d < count; ++d) {
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, d) != cudaSuccess) {
      std::printf("device %d: properties unreadable (%s)\n", d,
                  cudaGetErrorString(cudaGetLastError()));
      continue;
    }
    std::printf("device %d: %s, sm_%d%d, %d SMs, %zu MiB, %d MiB L2\n", d, p.name, p.major, p.minor,
                p.multiProcessorCount, static_cast<std::size_t>(p.totalGlobalMem >> 20),
                p.l2CacheSize >> 20);
  }
  return 0;
}
