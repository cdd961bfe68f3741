// The CUDA weight-only GEMV: one warp per output row, reading quant.h's layout as it is (no
// re-packing). Each lane loads 16 bytes at a time (16 INT8 or 32 INT4 values; a warp reads 512
// consecutive bytes, fully coalesced), widens them in registers, accumulates (q − o)·x over the
// chunk and multiplies by the chunk's scale once (a chunk never straddles a group when groups
// are multiples of 16 or 32 values: gemv_cuda_index.h). Lanes are combined with shuffles. Where a
// row's bytes are not a multiple of 16 (or groups are odd sizes), a lane reads one byte at a time
// and scales each value. Up to 8 rows of x share one pass over the weights.
#include <cuda_runtime.h>

#include "chapters/14_quantization/gemv_cuda_kernel.h"
#include "common/cuda.h"

namespace book::quant::gpu {
namespace {

constexpr int kThreads = 256, kRowsPerBlock = kThreads / 32;

__device__ inline float stored_value(const DeviceGemv& g, std::uint8_t byte, int shift) {
  if (g.dims.int4) return static_cast<float>((byte >> shift) & 0x0f);
  return g.is_signed ? static_cast<float>(static_cast<std::int8_t>(byte))
                     : static_cast<float>(byte);
}

template <int M, bool kChunks>
__global__ void quantized_gemv_kernel(DeviceGemv g, int t0) {
  const int row = blockIdx.x * kRowsPerBlock + threadIdx.x / 32, lane = threadIdx.x % 32;
  if (row >= g.dims.rows) return;
  const GemvDims d = g.dims;
  const long row_bytes = gemv_row_bytes(d);
  const std::uint8_t* w = g.data + row * row_bytes;
  const float* x = g.x + static_cast<long>(t0) * d.cols;
  float acc[M] = {};
  if constexpr (kChunks) {
    for (long b0 = lane * 16L; b0 < row_bytes; b0 += 32 * 16) {
      const uint4 raw = __ldg(reinterpret_cast<const uint4*>(w + b0));
      const std::uint8_t* bytes = reinterpret_cast<const std::uint8_t*>(&raw);
      const int col0 = first_col_of_byte(d, b0);
      const long scale = weight_index(d, row, col0).scale;
      const float s = g.scales[scale];
      const float o = g.zeros ? static_cast<float>(g.zeros[scale]) : g.offset;
      float part[M] = {};
#pragma unroll
      for (int j = 0; j < 16; ++j) {
        if (d.int4) {
          const float low = static_cast<float>(bytes[j] & 0x0f) - o;
          const float high = static_cast<float>(bytes[j] >> 4) - o;
#pragma unroll
          for (int t = 0; t < M; ++t) {
            const float* xt = x + static_cast<long>(t) * d.cols + col0 + 2 * j;
            part[t] += low * __ldg(xt) + high * __ldg(xt + 1);
          }
        } else {
          const float q = stored_value(g, bytes[j], 0) - o;
#pragma unroll
          for (int t = 0; t < M; ++t)
            part[t] += q * __ldg(x + static_cast<long>(t) * d.cols + col0 + j);
        }
      }
#pragma unroll
      for (int t = 0; t < M; ++t) acc[t] += s * part[t];
    }
  } else {
    for (long b = lane; b < row_bytes; b += 32)
      for (int k = 0; k < (d.int4 ? 2 : 1); ++k) {
        const int col = first_col_of_byte(d, b) + k;
        const WeightIndex at = weight_index(d, row, col);
        const float o = g.zeros ? static_cast<float>(g.zeros[at.scale]) : g.offset;
        const float v = g.scales[at.scale] * (stored_value(g, g.data[at.byte], at.shift) - o);
#pragma unroll
        for (int t = 0; t < M; ++t) acc[t] += v * x[static_cast<long>(t) * d.cols + col];
      }
  }
#pragma unroll
  for (int t = 0; t < M; ++t) {
    float sum = acc[t];
    for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, offset);
    if (lane == 0) g.y[static_cast<long>(t0 + t) * d.rows + row] = sum;
  }
}

template <int M>
void launch(const DeviceGemv& g, int t0, bool chunks) {
  const int blocks = (g.dims.rows + kRowsPerBlock - 1) / kRowsPerBlock;
  if (chunks)
    quantized_gemv_kernel<M, true><<<blocks, kThreads>>>(g, t0);
  else
    quantized_gemv_kernel<M, false><<<blocks, kThreads>>>(g, t0);
  BOOK_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

void launch_quantized_gemv(const DeviceGemv& g) {
  const bool chunks = gemv_row_bytes(g.dims) % 16 == 0 && chunk_in_one_group(g.dims);
  for (int t0 = 0; t0 < g.m;) {
    const int left = g.m - t0;
    if (left >= 8)
      launch<8>(g, t0, chunks), t0 += 8;
    else if (left >= 4)
      launch<4>(g, t0, chunks), t0 += 4;
    else if (left >= 2)
      launch<2>(g, t0, chunks), t0 += 2;
    else
      launch<1>(g, t0, chunks), t0 += 1;
  }
}

}  // namespace book::quant::gpu
