// Rung 6, vectorised: what changed — global loads and stores of 16 bytes (float4) where the rows
// allow it, and the A tile stored transposed (as[k][m]) so that a thread's 8 values of A for one
// k are contiguous in shared memory and come in two 16-byte shared loads instead of eight.
#include "chapters/02_gemm_cuda/device_tiles.cuh"
#include "chapters/02_gemm_cuda/kernels.h"
#include "chapters/02_gemm_cuda/tiles.h"

namespace book::gemm_cuda {
namespace {

using T = BlockTile2d;
static_assert(chunks_per_thread(T::kBM, T::kBK, 4, T::kThreads) == 1 &&
                  chunks_per_thread(T::kBK, T::kBN, 4, T::kThreads) == 1,
              "each thread copies one float4 of each tile");

__global__ void __launch_bounds__(T::kThreads)
    vectorised_kernel(const float* __restrict__ a, const float* __restrict__ b,
                      float* __restrict__ c, GemmShape s, bool a_aligned, bool bc_aligned) {
  __shared__ __align__(16) float as[T::kBK][T::kBM];  // transposed: as[k][m]
  __shared__ __align__(16) float bs[T::kBK][T::kBN];
  const int t = threadIdx.x;
  const int row0 = blockIdx.y * T::kBM, col0 = blockIdx.x * T::kBN;
  const Coord a_at = vectorised_a(t), b_at = vectorised_b(t), out = vectorised_output(t);
  float acc[T::kTM][T::kTN] = {};
  float a_frag[T::kTM], b_frag[T::kTN];
  for (int k0 = 0; k0 < s.k; k0 += T::kBK) {
    float v[4];
    read_chunk<4>(a, s.k, s.m, s.k, row0 + a_at.row, k0 + a_at.col, a_aligned, v);
#pragma unroll
    for (int j = 0; j < 4; ++j) as[a_at.col + j][a_at.row] = v[j];
    read_chunk<4>(b, s.n, s.k, s.n, k0 + b_at.row, col0 + b_at.col, bc_aligned, v);
    *reinterpret_cast<float4*>(&bs[b_at.row][b_at.col]) = make_float4(v[0], v[1], v[2], v[3]);
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < T::kBK; ++kk) {
#pragma unroll
      for (int i = 0; i < T::kTM; i += 4)
        *reinterpret_cast<float4*>(&a_frag[i]) =
            *reinterpret_cast<const float4*>(&as[kk][out.row + i]);
#pragma unroll
      for (int j = 0; j < T::kTN; j += 4)
        *reinterpret_cast<float4*>(&b_frag[j]) =
            *reinterpret_cast<const float4*>(&bs[kk][out.col + j]);
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
    for (int j = 0; j < T::kTN; j += 4) {
      const float v[4] = {acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]};
      write_chunk<4>(c, s.n, s.m, s.n, row0 + out.row + i, col0 + out.col + j, bc_aligned, v);
    }
}

}  // namespace

void sgemm_vectorised(const float* a, const float* b, float* c, GemmShape s, cudaStream_t stream) {
  check_gemm_args(a, b, c, s);
  const dim3 grid(ceil_div(s.n, T::kBN), ceil_div(s.m, T::kBM));
  const bool a_aligned = rows_aligned(a, s.k, 16);
  const bool bc_aligned = rows_aligned(b, s.n, 16) && rows_aligned(c, s.n, 16);
  vectorised_kernel<<<grid, T::kThreads, 0, stream>>>(a, b, c, s, a_aligned, bc_aligned);
  BOOK_LAUNCH_CHECK("rung 6 (vectorised)");
}

}  // namespace book::gemm_cuda
