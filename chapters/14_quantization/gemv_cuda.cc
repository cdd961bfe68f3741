#include "chapters/14_quantization/gemv_cuda.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <vector>

#include "chapters/14_quantization/gemv_cuda_kernel.h"
#include "common/check.h"
#include "common/cuda.h"
#include "common/float16.h"

namespace book::quant {
namespace {

// Runs `launch` once to warm up, then `repeats` times between CUDA events; the median ms.
template <typename Launch>
double median_ms(int repeats, Launch launch) {
  BOOK_CHECK(repeats >= 1, "time_ms: repeats must be >= 1, got " << repeats);
  launch();
  cudaEvent_t start, stop;
  BOOK_CUDA_CHECK(cudaEventCreate(&start));
  BOOK_CUDA_CHECK(cudaEventCreate(&stop));
  std::vector<float> times;
  for (int r = 0; r < repeats; ++r) {
    BOOK_CUDA_CHECK(cudaEventRecord(start));
    launch();
    BOOK_CUDA_CHECK(cudaEventRecord(stop));
    BOOK_CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    BOOK_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    times.push_back(ms);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

#define BOOK_CUBLAS_CHECK(call)                                         \
  do {                                                                  \
    const cublasStatus_t status_ = (call);                              \
    BOOK_CHECK(status_ == CUBLAS_STATUS_SUCCESS,                        \
               #call << " failed: " << cublasGetStatusString(status_)); \
  } while (false)

}  // namespace

GpuQuantizedGemv::GpuQuantizedGemv(const QuantizedMatrix& w)
    : scheme_(w.scheme), rows_(w.rows), cols_(w.cols) {
  check_matrix(w);
  data_ = cuda::DeviceBuffer<std::uint8_t>(w.data.size());
  data_.copy_from_host(w.data);
  scales_ = cuda::DeviceBuffer<float>(w.scales.size());
  scales_.copy_from_host(w.scales);
  if (!w.zeros.empty()) {
    zeros_ = cuda::DeviceBuffer<std::uint8_t>(w.zeros.size());
    zeros_.copy_from_host(w.zeros);
  }
}

void GpuQuantizedGemv::upload(std::span<const float> x, int m, std::span<float> y) {
  check_gemv_call("GpuQuantizedGemv::run", rows_, cols_, x, m, y);
  if (m != m_ || x_.empty()) {
    x_ = cuda::DeviceBuffer<float>(x.size());
    y_ = cuda::DeviceBuffer<float>(y.size());
    m_ = m;
  }
  x_.copy_from_host(x);
  y_.fill_poison();  // an output the kernel forgets stays NaN
}

void GpuQuantizedGemv::launch() {
  gpu::DeviceGemv g;
  const bool int4 = scheme_.bits == Bits::kInt4;
  const bool symmetric = scheme_.symmetry == Symmetry::kSymmetric;
  g.dims.rows = rows_;
  g.dims.cols = cols_;
  g.dims.int4 = int4;
  g.dims.group_cols = scheme_.granularity == Granularity::kGroup ? scheme_.group_size : cols_;
  g.dims.scale_stride =
      scheme_.granularity == Granularity::kPerTensor ? 0 : cols_ / g.dims.group_cols;
  g.is_signed = !int4 && symmetric;
  g.data = data_.data();
  g.scales = scales_.data();
  g.zeros = symmetric ? nullptr : zeros_.data();
  g.offset = int4 && symmetric ? 8.0f : 0.0f;
  g.x = x_.data();
  g.y = y_.data();
  g.m = m_;
  gpu::launch_quantized_gemv(g);
}

void GpuQuantizedGemv::run(std::span<const float> x, int m, std::span<float> y) {
  upload(x, m, y);
  launch();
  BOOK_CUDA_CHECK(cudaDeviceSynchronize());
  y_.copy_to_host(y);
}

double GpuQuantizedGemv::time_ms(std::span<const float> x, int m, std::span<float> y, int repeats) {
  run(x, m, y);
  return median_ms(repeats, [&] { launch(); });
}

std::size_t GpuQuantizedGemv::bytes_read(int m) const {
  return data_.size() + scales_.size() * sizeof(float) + zeros_.size() +
         static_cast<std::size_t>(m) * cols_ * sizeof(float);
}

GpuCublasGemv::GpuCublasGemv(std::span<const float> w, int rows, int cols, bool fp16)
    : rows_(rows), cols_(cols), fp16_(fp16) {
  BOOK_CHECK(rows >= 1 && cols >= 1 && w.size() == static_cast<std::size_t>(rows) * cols,
             "GpuCublasGemv: a " << rows << " × " << cols << " matrix needs "
                                 << static_cast<std::size_t>(rows) * cols
                                 << " floats (both sizes >= 1), got " << w.size());
  cublasHandle_t handle = nullptr;
  BOOK_CUBLAS_CHECK(cublasCreate(&handle));
  handle_ = handle;
  if (fp16) {
    std::vector<std::uint16_t> half(w.size());
    std::transform(w.begin(), w.end(), half.begin(), float_to_fp16);
    w16_ = cuda::DeviceBuffer<std::uint16_t>(half.size());
    w16_.copy_from_host(half);
  } else {
    w32_ = cuda::DeviceBuffer<float>(w.size());
    w32_.copy_from_host(w);
  }
}

GpuCublasGemv::~GpuCublasGemv() {
  if (handle_) cublasDestroy(static_cast<cublasHandle_t>(handle_));
}

void GpuCublasGemv::upload(std::span<const float> x, int m, std::span<float> y) {
  check_gemv_call("GpuCublasGemv::run", rows_, cols_, x, m, y);
  m_ = m;
  y_ = cuda::DeviceBuffer<float>(y.size());
  y_.fill_poison();
  if (fp16_) {
    std::vector<std::uint16_t> half(x.size());
    std::transform(x.begin(), x.end(), half.begin(), float_to_fp16);
    x16_ = cuda::DeviceBuffer<std::uint16_t>(half.size());
    x16_.copy_from_host(half);
  } else {
    x32_ = cuda::DeviceBuffer<float>(x.size());
    x32_.copy_from_host(x);
  }
}

// Row-major W [rows][cols] is column-major Wᵀ (cols × rows, ld cols); y = W·x is Wᵀᵀ·x, and the
// m rows of y (row-major [m][rows]) are the columns of a rows × m column-major C = Wᵀᵀ·Xᵀ.
void GpuCublasGemv::launch() {
  const auto handle = static_cast<cublasHandle_t>(handle_);
  const float one = 1.0f, zero = 0.0f;
  if (!fp16_ && m_ == 1) {
    BOOK_CUBLAS_CHECK(cublasSgemv(handle, CUBLAS_OP_T, cols_, rows_, &one, w32_.data(), cols_,
                                  x32_.data(), 1, &zero, y_.data(), 1));
  } else if (!fp16_) {
    BOOK_CUBLAS_CHECK(cublasSgemm(handle, CUBLAS_OP_T, CUBLAS_OP_N, rows_, m_, cols_, &one,
                                  w32_.data(), cols_, x32_.data(), cols_, &zero, y_.data(), rows_));
  } else {
    BOOK_CUBLAS_CHECK(cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, rows_, m_, cols_, &one,
                                   w16_.data(), CUDA_R_16F, cols_, x16_.data(), CUDA_R_16F, cols_,
                                   &zero, y_.data(), CUDA_R_32F, rows_, CUBLAS_COMPUTE_32F,
                                   CUBLAS_GEMM_DEFAULT));
  }
}

void GpuCublasGemv::run(std::span<const float> x, int m, std::span<float> y) {
  upload(x, m, y);
  launch();
  BOOK_CUDA_CHECK(cudaDeviceSynchronize());
  y_.copy_to_host(y);
}

double GpuCublasGemv::time_ms(std::span<const float> x, int m, std::span<float> y, int repeats) {
  run(x, m, y);
  return median_ms(repeats, [&] { launch(); });
}

std::size_t GpuCublasGemv::bytes_read(int m) const {
  const std::size_t element = fp16_ ? 2 : 4;
  return (static_cast<std::size_t>(rows_) + m) * cols_ * element;
}

}  // namespace book::quant
