// Rung 4, 1D register blocking: what changed — each thread accumulates 8 results of a column
// of C in registers, so one value of B read from shared memory feeds 8 FMAs, and a 64 × 64
// block tile halves the global traffic per FMA of rung 3's 32 × 32 tile.
#include "chapters/02_gemm_cuda/device_tiles.cuh"
#include "chapters/02_gemm_cuda/kernels.h"
#include "chapters/02_gemm_cuda/tiles.h"

namespace book::gemm_cuda {
namespace {

using T = BlockTile1d;
static_assert(T::kBM * T::kBK == T::kThreads && T::kBK * T::kBN == T::kThreads,
              "each thread copies exactly one element of each tile");

__global__ void __launch_bounds__(T::kThreads)
    blocktile_1d_kernel(const float* __restrict__ a, const float* __restrict__ b,
                        float* __restrict__ c, GemmShape s) {
  __shared__ float as[T::kBM][T::kBK];
  __shared__ float bs[T::kBK][T::kBN];
  const int t = threadIdx.x;
  const int row0 = blockIdx.y * T::kBM, col0 = blockIdx.x * T::kBN;
  const Coord a_at = blocktile_1d_a(t), b_at = blocktile_1d_b(t), out = blocktile_1d_output(t);
  float acc[T::kTM] = {};
  for (int k0 = 0; k0 < s.k; k0 += T::kBK) {
    float v[1];
    read_chunk<1>(a, s.k, s.m, s.k, row0 + a_at.row, k0 + a_at.col, true, v);
    as[a_at.row][a_at.col] = v[0];
    read_chunk<1>(b, s.n, s.k, s.n, k0 + b_at.row, col0 + b_at.col, true, v);
    bs[b_at.row][b_at.col] = v[0];
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < T::kBK; ++kk) {
      const float b_value = bs[kk][out.col];  // reused by all 8 results
#pragma unroll
      for (int i = 0; i < T::kTM; ++i) acc[i] += as[out.row + i][kk] * b_value;
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < T::kTM; ++i) {
    const float v[1] = {acc[i]};
    write_chunk<1>(c, s.n, s.m, s.n, row0 + out.row + i, col0 + out.col, true, v);
  }
}

}  // namespace

void sgemm_blocktile_1d(const float* a, const float* b, float* c, GemmShape s,
                        cudaStream_t stream) {
  check_gemm_args(a, b, c, s);
  const dim3 grid(ceil_div(s.n, T::kBN), ceil_div(s.m, T::kBM));
  blocktile_1d_kernel<<<grid, T::kThreads, 0, stream>>>(a, b, c, s);
  BOOK_LAUNCH_CHECK("rung 4 (blocktile_1d)");
}

}  // namespace book::gemm_cuda
