// Rung 9, mma.sync + cp.async: what changed from rung 8 — the warp-level PTX instead of WMMA:
// `ldmatrix` moves 8×8 tiles from shared memory straight into the register layout that
// `mma.sync.m16n8k16` expects (no opaque fragments), and tiles arrive by `cp.async` (global →
// shared without passing through registers) into a 3-stage ring, so the loads of step k+2
// overlap the tensor-core work of step k. Padded shared rows (+8 BF16) keep ldmatrix free of
// bank conflicts. Unaligned shapes (k or n not a multiple of 8) take a synchronous masked path.
#include <cuda_bf16.h>

#include "chapters/02_gemm_cuda/device_tiles.cuh"
#include "chapters/02_gemm_cuda/kernels.h"
#include "chapters/02_gemm_cuda/tiles.h"

namespace book::gemm_cuda {
namespace {

using T = TensorTile;
using bf16 = __nv_bfloat16;
constexpr int kLdA = T::kLdA;  // 80-byte rows: the 8 row addresses of an ldmatrix hit 8 bank quads
constexpr int kLdB = T::kLdB;  // 272-byte rows: likewise
constexpr int kStageA = T::kBM * kLdA;
constexpr int kStageB = T::kBK * kLdB;
constexpr int kSmemBytes = T::kPipelineSmemBytes;
static_assert(kSmemBytes == T::kStages * (kStageA + kStageB) * static_cast<int>(sizeof(bf16)));
constexpr int kLoads = chunks_per_thread(T::kBM, T::kBK, T::kChunk, T::kThreads);  // 2
static_assert(kLoads == chunks_per_thread(T::kBK, T::kBN, T::kChunk, T::kThreads), "");
constexpr int kFragsM = T::kWM / 16;  // 4 mma tiles of 16 rows
constexpr int kFragsN = T::kWN / 8;   // 4 mma tiles of 8 columns

__device__ __forceinline__ unsigned smem_address(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// 16 bytes global → shared, bypassing registers; src_bytes = 0 writes zeros (the tile's edge).
__device__ __forceinline__ void cp_async_16(void* dst, const void* src, bool read) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_address(dst)), "l"(src),
               "r"(read ? 16 : 0));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int kPending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending));
}

// One tile's chunk into shared memory: by cp.async when rows are 16-byte aligned (then a chunk is
// wholly inside or wholly outside), else through registers with masked loads.
template <bool kAsync>
__device__ __forceinline__ void copy_chunk(bf16* dst, const bf16* g, int ld, int rows, int cols,
                                           int row, int col, bool aligned) {
  if constexpr (kAsync) {
    const bool read = chunk_kind(row, col, rows, cols, T::kChunk, true) == ChunkKind::kVector;
    cp_async_16(dst, read ? g + static_cast<std::int64_t>(row) * ld + col : g, read);
  } else {
    bf16 v[T::kChunk];
    read_chunk<T::kChunk>(g, ld, rows, cols, row, col, aligned, v);
    std::memcpy(dst, v, 16);
  }
}

template <bool kAsync>
__global__ void __launch_bounds__(T::kThreads)
    mma_pipeline_kernel(const bf16* __restrict__ a, const bf16* __restrict__ b,
                        float* __restrict__ c, GemmShape s, bool a_aligned, bool b_aligned) {
  extern __shared__ __align__(128) unsigned char smem[];
  bf16* sa = reinterpret_cast<bf16*>(smem);
  bf16* sb = sa + T::kStages * kStageA;
  const int t = threadIdx.x, lane = t % 32, warp = t / 32;
  const int row0 = blockIdx.y * T::kBM, col0 = blockIdx.x * T::kBN;
  const int warp_row = (warp / T::kWarpsN) * T::kWM, warp_col = (warp % T::kWarpsN) * T::kWN;

  auto load_stage = [&](int stage, int k0) {
#pragma unroll
    for (int i = 0; i < kLoads; ++i) {
      const Coord at = tensor_a_chunk(t, i);
      copy_chunk<kAsync>(sa + stage * kStageA + at.row * kLdA + at.col, a, s.k, s.m, s.k,
                         row0 + at.row, k0 + at.col, a_aligned);
      const Coord bt = tensor_b_chunk(t, i);
      copy_chunk<kAsync>(sb + stage * kStageB + bt.row * kLdB + bt.col, b, s.n, s.k, s.n,
                         k0 + bt.row, col0 + bt.col, b_aligned);
    }
  };

  float acc[kFragsM][kFragsN][4] = {};
  //! [pipeline]
  const int k_tiles = ceil_div(s.k, T::kBK);
#pragma unroll
  for (int stage = 0; stage < T::kStages - 1; ++stage) {
    if (stage < k_tiles) load_stage(stage, stage * T::kBK);
    cp_async_commit();  // commit even when empty, so group counting stays uniform
  }
  for (int kt = 0; kt < k_tiles; ++kt) {
    cp_async_wait<T::kStages - 2>();  // tile kt has landed (for this thread) ...
    __syncthreads();                  // ... and for every thread; stage kt-1 is free again
    const int next = kt + T::kStages - 1;
    if (next < k_tiles) load_stage(next % T::kStages, next * T::kBK);
    cp_async_commit();
    //! [pipeline]
    const bf16* ta = sa + (kt % T::kStages) * kStageA;
    const bf16* tb = sb + (kt % T::kStages) * kStageB;
#pragma unroll
    for (int kk = 0; kk < T::kBK; kk += 16) {
      unsigned af[kFragsM][4], bfr[kFragsN][2];
#pragma unroll
      for (int mi = 0; mi < kFragsM; ++mi) {
        const bf16* p = ta + (warp_row + mi * 16 + lane % 16) * kLdA + kk + (lane / 16) * 8;
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                     : "=r"(af[mi][0]), "=r"(af[mi][1]), "=r"(af[mi][2]), "=r"(af[mi][3])
                     : "r"(smem_address(p)));
      }
#pragma unroll
      for (int nj = 0; nj < kFragsN; nj += 2) {
        const bf16* p = tb + (kk + lane % 8 + ((lane / 8) % 2) * 8) * kLdB + warp_col + nj * 8 +
                        (lane / 16) * 8;
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                     : "=r"(bfr[nj][0]), "=r"(bfr[nj][1]), "=r"(bfr[nj + 1][0]),
                       "=r"(bfr[nj + 1][1])
                     : "r"(smem_address(p)));
      }
#pragma unroll
      for (int mi = 0; mi < kFragsM; ++mi)
#pragma unroll
        for (int ni = 0; ni < kFragsN; ++ni)
          asm volatile(
              "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, "
              "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
              : "+f"(acc[mi][ni][0]), "+f"(acc[mi][ni][1]), "+f"(acc[mi][ni][2]),
                "+f"(acc[mi][ni][3])
              : "r"(af[mi][0]), "r"(af[mi][1]), "r"(af[mi][2]), "r"(af[mi][3]), "r"(bfr[ni][0]),
                "r"(bfr[ni][1]));
    }
  }
  cp_async_wait<0>();
#pragma unroll
  for (int mi = 0; mi < kFragsM; ++mi)
#pragma unroll
    for (int ni = 0; ni < kFragsN; ++ni)
#pragma unroll
      for (int reg = 0; reg < 4; ++reg) {
        const Coord o = mma_output(t, mi, ni, reg);
        const float v[1] = {acc[mi][ni][reg]};
        write_chunk<1>(c, s.n, s.m, s.n, row0 + o.row, col0 + o.col, true, v);
      }
}

}  // namespace

void gemm_bf16_mma(const bf16* a, const bf16* b, float* c, GemmShape s, cudaStream_t stream) {
  check_gemm_args(a, b, c, s);
  const dim3 grid(ceil_div(s.n, T::kBN), ceil_div(s.m, T::kBM));
  const bool a_aligned = rows_aligned(a, s.k, 16), b_aligned = rows_aligned(b, s.n, 16);
  // More than the 48 KiB default of dynamic shared memory: opt in (sm_80 allows up to 163 KiB).
  if (a_aligned && b_aligned) {
    BOOK_CUDA_CHECK(cudaFuncSetAttribute(mma_pipeline_kernel<true>,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes));
    mma_pipeline_kernel<true><<<grid, T::kThreads, kSmemBytes, stream>>>(a, b, c, s, true, true);
  } else {
    BOOK_CUDA_CHECK(cudaFuncSetAttribute(mma_pipeline_kernel<false>,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes));
    mma_pipeline_kernel<false>
        <<<grid, T::kThreads, kSmemBytes, stream>>>(a, b, c, s, a_aligned, b_aligned);
  }
  BOOK_LAUNCH_CHECK("rung 9 (mma_cp_async)");
}

}  // namespace book::gemm_cuda
