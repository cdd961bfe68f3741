// Rung 3, shared-memory tiling (exercise cuda_gemm.shared_tile): what changed — a block first
// copies a 32 × 32 tile of A and one of B into shared memory, then each thread reads its row and
// column from there. Every element fetched from global memory is used 32 times, so global
// traffic drops 32-fold from rung 2 (which relied on L1/L2 to catch the reuse).
#include "chapters/02_gemm_cuda/device_tiles.cuh"
#include "chapters/02_gemm_cuda/kernels.h"
#include "chapters/02_gemm_cuda/tiles.h"
#include "solutions/02_gemm_cuda/shared_tile_map.h"

namespace book::gemm_cuda {
namespace {

constexpr int kSide = SquareTiles::kSide;

__global__ void __launch_bounds__(kSide* kSide)
    shared_tile_kernel(const float* __restrict__ a, const float* __restrict__ b,
                       float* __restrict__ c, GemmShape s) {
  __shared__ float as[kSide][kSide];
  __shared__ float bs[kSide][kSide];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row0 = blockIdx.y * kSide, col0 = blockIdx.x * kSide;
  const Coord a_at = shared_tile_a(tx, ty), b_at = shared_tile_b(tx, ty);
  const Coord out = shared_tile_output(tx, ty);
  float sum = 0.0f;
  for (int k0 = 0; k0 < s.k; k0 += kSide) {
    // Outside the matrices the tiles hold zeros, which add nothing to the sums.
    float v[1];
    read_chunk<1>(a, s.k, s.m, s.k, row0 + a_at.row, k0 + a_at.col, true, v);
    as[a_at.row][a_at.col] = v[0];
    read_chunk<1>(b, s.n, s.k, s.n, k0 + b_at.row, col0 + b_at.col, true, v);
    bs[b_at.row][b_at.col] = v[0];
    __syncthreads();  // the tiles are complete
#pragma unroll
    for (int kk = 0; kk < kSide; ++kk) sum += as[out.row][kk] * bs[kk][out.col];
    __syncthreads();  // everyone is done reading before the next tile overwrites them
  }
  const float v[1] = {sum};
  write_chunk<1>(c, s.n, s.m, s.n, row0 + out.row, col0 + out.col, true, v);
}

}  // namespace

void sgemm_shared_tile(const float* a, const float* b, float* c, GemmShape s, cudaStream_t stream) {
  check_gemm_args(a, b, c, s);
  const dim3 grid(ceil_div(s.n, kSide), ceil_div(s.m, kSide));
  shared_tile_kernel<<<grid, dim3(kSide, kSide), 0, stream>>>(a, b, c, s);
  BOOK_LAUNCH_CHECK("rung 3 (shared_tile)");
}

}  // namespace book::gemm_cuda
