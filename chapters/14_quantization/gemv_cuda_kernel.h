/// @file
/// The CUDA weight-only GEMV's launcher, in plain C++ types so that host code compiled by g++
/// (gemv_cuda.cc) can call what nvcc compiled (gemv_cuda.cu).
#pragma once

#include <cstdint>

#include "chapters/14_quantization/gemv_cuda_index.h"

namespace book::quant::gpu {

/// A quantised matrix and one call's activations, all in device memory.
struct DeviceGemv {
  GemvDims dims;                        ///< shape and layout
  bool is_signed = true;                ///< INT8 two's complement (symmetric INT8)
  const std::uint8_t* data = nullptr;   ///< QuantizedMatrix::data
  const float* scales = nullptr;        ///< QuantizedMatrix::scales
  const std::uint8_t* zeros = nullptr;  ///< QuantizedMatrix::zeros, or null when symmetric
  float offset = 0;                     ///< symmetric: 8 for INT4 (stored q + 8), else 0
  const float* x = nullptr;             ///< [m][cols]
  float* y = nullptr;                   ///< [m][rows], written
  int m = 0;                            ///< x's rows (>= 1)
};

/// One warp per output row (8 a block of 256 threads), each lane reading 16 bytes at a time when
/// a row's bytes are a multiple of 16 (every model's shape), one byte at a time otherwise; the m
/// rows of x in runs of at most 8. Launches on the default stream and checks the launch.
void launch_quantized_gemv(const DeviceGemv& g);

}  // namespace book::quant::gpu
