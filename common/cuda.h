/// @file
/// CUDA error checks and a device query, for host code (compiled by g++ or nvcc).
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "common/check.h"

namespace book::cuda {

/// Number of usable CUDA devices; 0 (never an exception) when there is no driver or no GPU.
int device_count();

/// One line per device: name, compute capability, SMs, memory, clocks.
std::string device_summary();

/// Why device_count() is 0, in words ("no NVIDIA driver", "no device", ...); empty if it is not.
std::string no_device_reason();

}  // namespace book::cuda

/// Throws book::Error naming the call and CUDA's description when a runtime call fails.
#define BOOK_CUDA_CHECK(call)                                                                  \
  do {                                                                                         \
    const cudaError_t book_cuda_status_ = (call);                                              \
    BOOK_CHECK(book_cuda_status_ == cudaSuccess,                                               \
               #call << " failed: " << cudaGetErrorName(book_cuda_status_) << ": "            \
                     << cudaGetErrorString(book_cuda_status_));                                \
  } while (false)
