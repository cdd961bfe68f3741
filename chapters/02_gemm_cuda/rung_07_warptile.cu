// Rung 7, warp tiling: what changed — the 8 × 8 results of a thread are no longer one square but
// 2 × 2 squares of 4 × 4 inside its warp's compact 64 × 32 sub-tile, and K per step doubles to 16.
// A warp now reads only 64 + 32 distinct floats of shared memory per k (broadcasts within the
// warp, no bank conflicts), and the deeper step halves the __syncthreads per FMA.
#include "chapters/02_gemm_cuda/device_tiles.cuh"
#include "chapters/02_gemm_cuda/kernels.h"
#include "chapters/02_gemm_cuda/tiles.h"

namespace book::gemm_cuda {
namespace {

using T = WarpTile;
constexpr int kLoads = chunks_per_thread(T::kBM, T::kBK, 4, T::kThreads);  // 2
static_assert(kLoads == chunks_per_thread(T::kBK, T::kBN, 4, T::kThreads), "");
static_assert(T::kTM == 4 && T::kTN == 4, "one float4 per row of a lane's square");

__global__ void __launch_bounds__(T::kThreads)
    warptile_kernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
                    GemmShape s, bool a_aligned, bool bc_aligned) {
  __shared__ __align__(16) float as[T::kBK][T::kBM];  // transposed
  __shared__ __align__(16) float bs[T::kBK][T::kBN];
  const int t = threadIdx.x;
  const int row0 = blockIdx.y * T::kBM, col0 = blockIdx.x * T::kBN;
  float acc[T::kIterM][T::kIterN][T::kTM][T::kTN] = {};
  for (int k0 = 0; k0 < s.k; k0 += T::kBK) {
#pragma unroll
    for (int i = 0; i < kLoads; ++i) {
      const Coord a_at = warptile_a(t, i), b_at = warptile_b(t, i);
      float v[4];
      read_chunk<4>(a, s.k, s.m, s.k, row0 + a_at.row, k0 + a_at.col, a_aligned, v);
#pragma unroll
      for (int j = 0; j < 4; ++j) as[a_at.col + j][a_at.row] = v[j];
      read_chunk<4>(b, s.n, s.k, s.n, k0 + b_at.row, col0 + b_at.col, bc_aligned, v);
      *reinterpret_cast<float4*>(&bs[b_at.row][b_at.col]) = make_float4(v[0], v[1], v[2], v[3]);
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < T::kBK; ++kk) {
      float a_frag[T::kIterM][T::kTM], b_frag[T::kIterN][T::kTN];
#pragma unroll
      for (int wm = 0; wm < T::kIterM; ++wm)
        *reinterpret_cast<float4*>(a_frag[wm]) =
            *reinterpret_cast<const float4*>(&as[kk][warptile_output(t, wm, 0).row]);
#pragma unroll
      for (int wn = 0; wn < T::kIterN; ++wn)
        *reinterpret_cast<float4*>(b_frag[wn]) =
            *reinterpret_cast<const float4*>(&bs[kk][warptile_output(t, 0, wn).col]);
#pragma unroll
      for (int wm = 0; wm < T::kIterM; ++wm)
#pragma unroll
        for (int wn = 0; wn < T::kIterN; ++wn)
#pragma unroll
          for (int i = 0; i < T::kTM; ++i)
#pragma unroll
            for (int j = 0; j < T::kTN; ++j) acc[wm][wn][i][j] += a_frag[wm][i] * b_frag[wn][j];
    }
    __syncthreads();
  }
#pragma unroll
  for (int wm = 0; wm < T::kIterM; ++wm)
#pragma unroll
    for (int wn = 0; wn < T::kIterN; ++wn) {
      const Coord first = warptile_output(t, wm, wn);
#pragma unroll
      for (int i = 0; i < T::kTM; ++i) {
        const float v[4] = {acc[wm][wn][i][0], acc[wm][wn][i][1], acc[wm][wn][i][2],
                            acc[wm][wn][i][3]};
        write_chunk<4>(c, s.n, s.m, s.n, row0 + first.row + i, col0 + first.col, bc_aligned, v);
      }
    }
}

}  // namespace

void sgemm_warptile(const float* a, const float* b, float* c, GemmShape s, cudaStream_t stream) {
  check_gemm_args(a, b, c, s);
  const dim3 grid(ceil_div(s.n, T::kBN), ceil_div(s.m, T::kBM));
  const bool a_aligned = rows_aligned(a, s.k, 16);
  const bool bc_aligned = rows_aligned(b, s.n, 16) && rows_aligned(c, s.n, 16);
  warptile_kernel<<<grid, T::kThreads, 0, stream>>>(a, b, c, s, a_aligned, bc_aligned);
  BOOK_LAUNCH_CHECK("rung 7 (warptile)");
}

}  // namespace book::gemm_cuda
