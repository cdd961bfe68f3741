/// @file
/// The CUDA weight-only GEMV seen from the host (gemv_cuda.cu), and its peer, cuBLAS on FP32 or
/// FP16 weights. Built wherever nvcc is; runs where a GPU is (the tests skip, saying so, without
/// one).
#pragma once

#include <cstddef>
#include <span>

#include "chapters/14_quantization/quant.h"
#include "common/device_buffer.h"

namespace book::quant {

/// A quantised matrix on the GPU (quant.h's arrays uploaded as they are) and y = W·x.
class GpuQuantizedGemv {
 public:
  /// Uploads `w`. Throws book::Error if w is inconsistent (check_matrix) or CUDA fails (no GPU
  /// included).
  explicit GpuQuantizedGemv(const QuantizedMatrix& w);

  /// y[t][r] = Σ_c W[r][c]·x[t][c] for t < m, as QuantizedGemv::run (gemv.h): uploads x, poisons
  /// the device's y, runs, downloads y. Throws book::Error if m < 1 or the sizes are wrong.
  void run(std::span<const float> x, int m, std::span<float> y);
  /// run() once, then `repeats` timed launches on the uploaded x (CUDA events); the median
  /// milliseconds per launch.
  double time_ms(std::span<const float> x, int m, std::span<float> y, int repeats);
  /// Bytes a launch reads: integers, scales, zero points, m·cols·4 of x.
  std::size_t bytes_read(int m) const;

 private:
  void upload(std::span<const float> x, int m, std::span<float> y);
  void launch();
  Scheme scheme_;
  int rows_, cols_, m_ = 0;
  cuda::DeviceBuffer<std::uint8_t> data_, zeros_;
  cuda::DeviceBuffer<float> scales_, x_, y_;
};

/// The peer: cuBLAS's GEMV (m = 1) or GEMM on the same shape with FP32 weights, or FP16 weights
/// and x (cublasGemmEx, FP32 accumulation), the formats a GPU server keeps unquantised weights in.
class GpuCublasGemv {
 public:
  /// Uploads [rows][cols] `w` (as FP16 when `fp16`). Throws book::Error on bad sizes or a CUDA
  /// or cuBLAS failure.
  GpuCublasGemv(std::span<const float> w, int rows, int cols, bool fp16);
  ~GpuCublasGemv();
  GpuCublasGemv(const GpuCublasGemv&) = delete;             ///< Owns a cuBLAS handle.
  GpuCublasGemv& operator=(const GpuCublasGemv&) = delete;  ///< Owns a cuBLAS handle.

  /// Same contract as GpuQuantizedGemv::run.
  void run(std::span<const float> x, int m, std::span<float> y);
  /// Same contract as GpuQuantizedGemv::time_ms.
  double time_ms(std::span<const float> x, int m, std::span<float> y, int repeats);
  /// rows·cols·(4 or 2) bytes of W plus m·cols·(4 or 2) of x.
  std::size_t bytes_read(int m) const;

 private:
  void upload(std::span<const float> x, int m, std::span<float> y);
  void launch();
  int rows_, cols_, m_ = 0;
  bool fp16_;
  void* handle_ = nullptr;  // cublasHandle_t
  cuda::DeviceBuffer<float> w32_, x32_, y_;
  cuda::DeviceBuffer<std::uint16_t> w16_, x16_;
};

}  // namespace book::quant
