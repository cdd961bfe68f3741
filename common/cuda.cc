#include "common/cuda.h"

#include <sstream>

namespace book::cuda {

namespace {
cudaError_t query_count(int& count) {
  count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) count = 0;
  return status;
}
}  // namespace

int device_count() {
  int count = 0;
  query_count(count);
  return count;
}

std::string no_device_reason() {
  int count = 0;
  const cudaError_t status = query_count(count);
  if (count > 0) return "";
  if (status == cudaErrorInsufficientDriver || status == cudaErrorNoDevice || status == cudaSuccess)
    return std::string("no CUDA device here (") + cudaGetErrorString(status) + ")";
  return std::string("CUDA is unusable here: ") + cudaGetErrorName(status) + ": " +
         cudaGetErrorString(status);
}

std::string device_summary() {
  std::ostringstream out;
  const int count = device_count();
  if (count == 0) return no_device_reason();
  for (int d = 0; d < count; ++d) {
    cudaDeviceProp p{};
    BOOK_CUDA_CHECK(cudaGetDeviceProperties(&p, d));
    int clock_khz = 0, memory_clock_khz = 0, bus_width = 0;
    cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, d);
    cudaDeviceGetAttribute(&memory_clock_khz, cudaDevAttrMemoryClockRate, d);
    cudaDeviceGetAttribute(&bus_width, cudaDevAttrGlobalMemoryBusWidth, d);
    out << "GPU " << d << ": " << p.name << ", sm_" << p.major << p.minor << ", "
        << p.multiProcessorCount << " SMs, " << (p.totalGlobalMem >> 20) << " MiB, "
        << clock_khz / 1000 << " MHz, " << p.sharedMemPerBlockOptin / 1024
        << " KiB shared/block (opt-in), memory bus " << bus_width << " bit at "
        << memory_clock_khz / 1000 << " MHz\n";
  }
  return out.str();
}

}  // namespace book::cuda
