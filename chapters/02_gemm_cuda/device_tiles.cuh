/// @file
/// Device-side helpers shared by the tiled kernels: read a chunk of a tile (one wide load, a zero
/// fill, or masked scalar loads, decided by chunk_kind() exactly as the host schedules decide
/// it) and write a chunk of C. nvcc only.
#pragma once

#include <cuda_bf16.h>

#include <cstdint>
#include <cstring>

#include "chapters/02_gemm_cuda/index.h"
#include "common/check.h"
#include "common/cuda.h"

namespace book::gemm_cuda {

/// Reads `W` consecutive elements of row `row` starting at `col` of a `rows` × `cols` matrix `g`
/// with leading dimension `ld` into `out`; `aligned` says whether rows allow wide loads. A
/// 16-byte chunk is one LDG.128 when chunk_kind() allows it; elements outside read as zero.
//! [read_chunk]
template <int W, typename T>
__device__ __forceinline__ void read_chunk(const T* __restrict__ g, int ld, int rows, int cols,
                                           int row, int col, bool aligned, T (&out)[W]) {
  const T* p = g + static_cast<std::int64_t>(row) * ld + col;
  switch (chunk_kind(row, col, rows, cols, W, aligned)) {
    case ChunkKind::kVector:
      if constexpr (W * sizeof(T) == 16) {
        const uint4 v = __ldg(reinterpret_cast<const uint4*>(p));
        std::memcpy(out, &v, 16);
      } else {
#pragma unroll
        for (int j = 0; j < W; ++j) out[j] = p[j];
      }
      break;
    case ChunkKind::kZero:
#pragma unroll
      for (int j = 0; j < W; ++j) out[j] = static_cast<T>(0.0f);
      break;
    case ChunkKind::kScalar:
#pragma unroll
      for (int j = 0; j < W; ++j) out[j] = col + j < cols ? p[j] : static_cast<T>(0.0f);
      break;
  }
}
//! [read_chunk]

/// Writes the `W` floats `v` to row `row`, columns `col`… of C (`rows` × `cols`, leading
/// dimension `ld`), masked exactly as read_chunk() reads: one STG.128 when `aligned` and inside.
template <int W>
__device__ __forceinline__ void write_chunk(float* __restrict__ g, int ld, int rows, int cols,
                                            int row, int col, bool aligned, const float (&v)[W]) {
  float* p = g + static_cast<std::int64_t>(row) * ld + col;
  switch (chunk_kind(row, col, rows, cols, W, aligned)) {
    case ChunkKind::kVector:
      if constexpr (W == 4) {
        *reinterpret_cast<float4*>(p) = make_float4(v[0], v[1], v[2], v[3]);
      } else {
#pragma unroll
        for (int j = 0; j < W; ++j) p[j] = v[j];
      }
      break;
    case ChunkKind::kZero:
      break;
    case ChunkKind::kScalar:
#pragma unroll
      for (int j = 0; j < W; ++j)
        if (col + j < cols) p[j] = v[j];
      break;
  }
}

/// True when every row of a matrix at `p` with leading dimension `ld` starts on a `bytes`
/// boundary, so that wide (16-byte) accesses are allowed.
template <typename T>
inline bool rows_aligned(const T* p, int ld, int bytes) {
  return reinterpret_cast<std::uintptr_t>(p) % bytes == 0 && (ld * sizeof(T)) % bytes == 0;
}

}  // namespace book::gemm_cuda

/// After a launch: turns a launch error into a book::Error naming the rung.
#define BOOK_LAUNCH_CHECK(rung_name)                                                        \
  do {                                                                                      \
    const cudaError_t book_launch_status_ = cudaGetLastError();                             \
    BOOK_CHECK(book_launch_status_ == cudaSuccess,                                          \
               rung_name << " launch failed: " << cudaGetErrorString(book_launch_status_)); \
  } while (false)
