// Rung 5, 2D register blocking (exercise cuda_gemm.register_2d): what changed — each thread
// computes an 8 × 8 square of C as a sum of outer products: per k it loads 8 values of A and 8 of
// B from shared memory into registers and does 64 FMAs with them (4 FMAs per shared load, up from
// rung 4's 8/9), and the 128 × 128 block tile halves global traffic again.
#include "chapters/02_gemm_cuda/device_tiles.cuh"
#include "chapters/02_gemm_cuda/kernels.h"
#include "chapters/02_gemm_cuda/tiles.h"
#include "solutions/02_gemm_cuda/register_2d_map.h"

namespace book::gemm_cuda {
namespace {

using T = BlockTile2d;

__global__ void __launch_bounds__(T::kThreads)
    register_2d_kernel(const float* __restrict__ a, const float* __restrict__ b,
                       float* __restrict__ c, GemmShape s) {
  __shared__ float as[T::kBM][T::kBK];
  __shared__ float bs[T::kBK][T::kBN];
  const int t = threadIdx.x;
  const int row0 = blockIdx.y * T::kBM, col0 = blockIdx.x * T::kBN;
  const Coord out = register_2d_output(t);
  float acc[T::kTM][T::kTN] = {};
  float a_frag[T::kTM], b_frag[T::kTN];
  for (int k0 = 0; k0 < s.k; k0 += T::kBK) {
#pragma unroll
    for (int i = 0; i < kRegister2dLoads; ++i) {
      const Coord a_at = register_2d_a(t, i), b_at = register_2d_b(t, i);
      float v[1];
      read_chunk<1>(a, s.k, s.m, s.k, row0 + a_at.row, k0 + a_at.col, true, v);
      as[a_at.row][a_at.col] = v[0];
      read_chunk<1>(b, s.n, s.k, s.n, k0 + b_at.row, col0 + b_at.col, true, v);
      bs[b_at.row][b_at.col] = v[0];
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < T::kBK; ++kk) {
#pragma unroll
      for (int i = 0; i < T::kTM; ++i) a_frag[i] = as[out.row + i][kk];
#pragma unroll
      for (int j = 0; j < T::kTN; ++j) b_frag[j] = bs[kk][out.col + j];
#pragma unroll
      for (int i = 0; i < T::kTM; ++i)
#pragma unroll
        for (int j = 0; j < T::kTN; ++j) acc[i][j] += a_frag[i] * b_frag[j];
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < T::kTM; ++i)
#pragma unroll
    for (int j = 0; j < T::kTN; ++j) {
      const float v[1] = {acc[i][j]};
      write_chunk<1>(c, s.n, s.m, s.n, row0 + out.row + i, col0 + out.col + j, true, v);
    }
}

}  // namespace

void sgemm_register_2d(const float* a, const float* b, float* c, GemmShape s, cudaStream_t stream) {
  check_gemm_args(a, b, c, s);
  const dim3 grid(ceil_div(s.n, T::kBN), ceil_div(s.m, T::kBM));
  register_2d_kernel<<<grid, T::kThreads, 0, stream>>>(a, b, c, s);
  BOOK_LAUNCH_CHECK("rung 5 (register_2d)");
}

}  // namespace book::gemm_cuda
