// Rung 2, coalesced: what changed — threadIdx.x now runs along a row of C.
// A warp's 32 lanes read one element of A (a broadcast, 1 sector) and 32 consecutive elements
// of B (4 sectors), and write 32 consecutive elements of C: 5 sectors per k instead of 33.
#include "chapters/02_gemm_cuda/device_tiles.cuh"
#include "chapters/02_gemm_cuda/kernels.h"
#include "chapters/02_gemm_cuda/tiles.h"

namespace book::gemm_cuda {
namespace {

__global__ void coalesced_kernel(const float* __restrict__ a, const float* __restrict__ b,
                                 float* __restrict__ c, GemmShape s) {
  const Coord out = coalesced_output(blockIdx.x, blockIdx.y, threadIdx.x, threadIdx.y);
  if (!inside(out.row, out.col, s.m, s.n)) return;
  const float* a_row = a + static_cast<std::int64_t>(out.row) * s.k;
  float sum = 0.0f;
  for (int k = 0; k < s.k; ++k) sum += a_row[k] * b[static_cast<std::int64_t>(k) * s.n + out.col];
  c[static_cast<std::int64_t>(out.row) * s.n + out.col] = sum;
}

}  // namespace

void sgemm_coalesced(const float* a, const float* b, float* c, GemmShape s, cudaStream_t stream) {
  check_gemm_args(a, b, c, s);
  constexpr int kSide = SquareTiles::kSide;
  const dim3 grid(ceil_div(s.n, kSide), ceil_div(s.m, kSide));
  coalesced_kernel<<<grid, dim3(kSide, kSide), 0, stream>>>(a, b, c, s);
  BOOK_LAUNCH_CHECK("rung 2 (coalesced)");
}

}  // namespace book::gemm_cuda
