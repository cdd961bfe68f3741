// Rung 8, tensor cores through WMMA (exercise cuda_gemm.wmma): what changed — BF16 inputs, and
// each warp multiplies 16 × 16 × 16 fragments with one wmma::mma_sync (a tensor-core instruction
// sequence) instead of 4096 scalar FMAs, accumulating in FP32. Shared tiles are padded by 8 BF16
// per row; results go through a per-warp staging tile so the edges can be masked.
#include <mma.h>

#include "chapters/02_gemm_cuda/device_tiles.cuh"
#include "chapters/02_gemm_cuda/kernels.h"
#include "chapters/02_gemm_cuda/tiles.h"
#include "solutions/02_gemm_cuda/wmma_map.h"

namespace book::gemm_cuda {
namespace {

using T = TensorTile;
using bf16 = __nv_bfloat16;
namespace wmma = nvcuda::wmma;
constexpr int kLdA = T::kBK + 8;  // multiple of 8 BF16, as WMMA requires; breaks bank patterns
constexpr int kLdB = T::kBN + 8;
constexpr int kFragsM = T::kWM / 16;  // 4
constexpr int kFragsN = T::kWN / 16;  // 2

__global__ void __launch_bounds__(T::kThreads)
    wmma_kernel(const bf16* __restrict__ a, const bf16* __restrict__ b, float* __restrict__ c,
                GemmShape s, bool a_aligned, bool b_aligned) {
  __shared__ __align__(128) bf16 as[T::kBM * kLdA];
  __shared__ __align__(128) bf16 bs[T::kBK * kLdB];
  __shared__ __align__(128) float staging[T::kThreads / 32][16 * 16];
  const int t = threadIdx.x, warp = t / 32, lane = t % 32;
  const int row0 = blockIdx.y * T::kBM, col0 = blockIdx.x * T::kBN;

  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[kFragsM][kFragsN];
#pragma unroll
  for (int fm = 0; fm < kFragsM; ++fm)
#pragma unroll
    for (int fn = 0; fn < kFragsN; ++fn) wmma::fill_fragment(acc[fm][fn], 0.0f);

  for (int k0 = 0; k0 < s.k; k0 += T::kBK) {
#pragma unroll
    for (int i = 0; i < kWmmaLoads; ++i) {
      const Coord at = wmma_a_chunk(t, i), bt = wmma_b_chunk(t, i);
      bf16 v[T::kChunk];
      read_chunk<T::kChunk>(a, s.k, s.m, s.k, row0 + at.row, k0 + at.col, a_aligned, v);
      std::memcpy(&as[at.row * kLdA + at.col], v, sizeof v);
      read_chunk<T::kChunk>(b, s.n, s.k, s.n, k0 + bt.row, col0 + bt.col, b_aligned, v);
      std::memcpy(&bs[bt.row * kLdB + bt.col], v, sizeof v);
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < T::kBK; kk += 16) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, bf16, wmma::row_major> fa[kFragsM];
      wmma::fragment<wmma::matrix_b, 16, 16, 16, bf16, wmma::row_major> fb[kFragsN];
#pragma unroll
      for (int fm = 0; fm < kFragsM; ++fm)
        wmma::load_matrix_sync(fa[fm], &as[wmma_fragment(warp, fm, 0).row * kLdA + kk], kLdA);
#pragma unroll
      for (int fn = 0; fn < kFragsN; ++fn)
        wmma::load_matrix_sync(fb[fn], &bs[kk * kLdB + wmma_fragment(warp, 0, fn).col], kLdB);
#pragma unroll
      for (int fm = 0; fm < kFragsM; ++fm)
#pragma unroll
        for (int fn = 0; fn < kFragsN; ++fn)
          wmma::mma_sync(acc[fm][fn], fa[fm], fb[fn], acc[fm][fn]);
    }
    __syncthreads();
  }
  // A fragment's register layout is unspecified, so stage it in shared memory, then copy the
  // elements that lie inside C.
#pragma unroll
  for (int fm = 0; fm < kFragsM; ++fm)
#pragma unroll
    for (int fn = 0; fn < kFragsN; ++fn) {
      wmma::store_matrix_sync(staging[warp], acc[fm][fn], 16, wmma::mem_row_major);
      __syncwarp();
      const Coord f = wmma_fragment(warp, fm, fn);
#pragma unroll
      for (int i = 0; i < 8; ++i) {
        const Coord e = wmma_staged(lane, i);
        const float v[1] = {staging[warp][e.row * 16 + e.col]};
        write_chunk<1>(c, s.n, s.m, s.n, row0 + f.row + e.row, col0 + f.col + e.col, true, v);
      }
      __syncwarp();
    }
}

}  // namespace

void gemm_bf16_wmma(const bf16* a, const bf16* b, float* c, GemmShape s, cudaStream_t stream) {
  check_gemm_args(a, b, c, s);
  const dim3 grid(ceil_div(s.n, T::kBN), ceil_div(s.m, T::kBM));
  wmma_kernel<<<grid, T::kThreads, 0, stream>>>(a, b, c, s, rows_aligned(a, s.k, 16),
                                                rows_aligned(b, s.n, 16));
  BOOK_LAUNCH_CHECK("rung 8 (wmma_bf16)");
}

}  // namespace book::gemm_cuda
