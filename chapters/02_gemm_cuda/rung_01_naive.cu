// Rung 1, naive: one thread per element of C, threadIdx.x running down a column of C.
// Why it is slow: the 32 lanes of a warp read 32 different rows of A (32 sectors per load,
// each 4 bytes used of 32), and every element of A and B is fetched n and m times from L2.
#include "chapters/02_gemm_cuda/device_tiles.cuh"
#include "chapters/02_gemm_cuda/kernels.h"
#include "chapters/02_gemm_cuda/tiles.h"

namespace book::gemm_cuda {
namespace {

__global__ void naive_kernel(const float* __restrict__ a, const float* __restrict__ b,
                             float* __restrict__ c, GemmShape s) {
  const Coord out = naive_output(blockIdx.x, blockIdx.y, threadIdx.x, threadIdx.y);
  if (!inside(out.row, out.col, s.m, s.n)) return;
  float sum = 0.0f;
  for (int k = 0; k < s.k; ++k)
    sum += a[static_cast<std::int64_t>(out.row) * s.k + k] *
           b[static_cast<std::int64_t>(k) * s.n + out.col];
  c[static_cast<std::int64_t>(out.row) * s.n + out.col] = sum;
}

}  // namespace

void sgemm_naive(const float* a, const float* b, float* c, GemmShape s, cudaStream_t stream) {
  check_gemm_args(a, b, c, s);
  constexpr int kSide = SquareTiles::kSide;
  const dim3 grid(ceil_div(s.m, kSide), ceil_div(s.n, kSide));  // x covers rows (the mistake)
  naive_kernel<<<grid, dim3(kSide, kSide), 0, stream>>>(a, b, c, s);
  BOOK_LAUNCH_CHECK("rung 1 (naive)");
}

}  // namespace book::gemm_cuda
