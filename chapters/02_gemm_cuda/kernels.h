/// @file
/// The ladder's kernels, as host functions that launch them. All take device pointers to
/// row-major matrices, compute C = A · B (overwriting C: α = 1, β = 0), check their arguments
/// with check_gemm_args() before touching the GPU, launch on `stream`, and return without
/// synchronising. Every rung accepts any m, n, k ≥ 1: tiles that stick out of the matrices are
/// zero-filled on the way in and masked on the way out.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "chapters/02_gemm_cuda/schedule.h"

// Declared, not included: cuda_bf16.h and cublas_v2.h need headers that only nvcc's include
// path has, and g++ code (tests, the stage) only passes pointers and handles around.
struct __nv_bfloat16;
/// cuBLAS's handle type, as cublas_api.h declares it.
typedef struct cublasContext* cublasHandle_t;

namespace book::gemm_cuda {

/// Rung 1: one thread per C element, threadIdx.x running down a column (uncoalesced).
void sgemm_naive(const float* a, const float* b, float* c, GemmShape shape, cudaStream_t stream);

/// Rung 2: one thread per C element, threadIdx.x running along a row (coalesced).
void sgemm_coalesced(const float* a, const float* b, float* c, GemmShape shape,
                     cudaStream_t stream);

/// Rung 3, exercise cuda_gemm.shared_tile: 32 × 32 tiles of A and B staged in shared memory.
void sgemm_shared_tile(const float* a, const float* b, float* c, GemmShape shape,
                       cudaStream_t stream);

/// Rung 4: 64 × 64 block tiles, each thread accumulating 8 results of a column in registers.
void sgemm_blocktile_1d(const float* a, const float* b, float* c, GemmShape shape,
                        cudaStream_t stream);

/// Rung 5, exercise cuda_gemm.register_2d: 128 × 128 block tiles, an 8 × 8 square per thread.
void sgemm_register_2d(const float* a, const float* b, float* c, GemmShape shape,
                       cudaStream_t stream);

/// Rung 6: rung 5 with 16-byte (float4) global loads and stores and a transposed A tile.
void sgemm_vectorised(const float* a, const float* b, float* c, GemmShape shape,
                      cudaStream_t stream);

/// Rung 7: rung 6 with warp tiling: each warp computes a compact 64 × 32 sub-tile.
void sgemm_warptile(const float* a, const float* b, float* c, GemmShape shape, cudaStream_t stream);

/// Rung 8, exercise cuda_gemm.wmma: BF16 inputs, FP32 accumulation on tensor cores via WMMA.
void gemm_bf16_wmma(const __nv_bfloat16* a, const __nv_bfloat16* b, float* c, GemmShape shape,
                    cudaStream_t stream);

/// Rung 9: BF16 `mma.sync.m16n8k16` fed by `ldmatrix`, with a 3-stage `cp.async` pipeline.
void gemm_bf16_mma(const __nv_bfloat16* a, const __nv_bfloat16* b, float* c, GemmShape shape,
                   cudaStream_t stream);

/// Rung 10 (Hopper only): BF16 `wgmma.mma_async.m64n128k16` reading both operands from
/// shared memory, fed by TMA (`cp.async.bulk.tensor`) through a 4-stage mbarrier ring; one
/// producer and two consumer warpgroups per 128 × 128 tile. Throws book::Error (with
/// wgmma_unavailable_reason()) on any GPU that is not compute capability 9.0. Where TMA cannot
/// describe the rows (k or n not a multiple of 8, or A or B not 16-byte aligned:
/// wgmma_tma_unsupported()), it runs rung 9 (gemm_bf16_mma) instead.
void gemm_bf16_wgmma(const __nv_bfloat16* a, const __nv_bfloat16* b, float* c, GemmShape shape,
                     cudaStream_t stream);

/// Why rung 10 cannot run on the current device, e.g. "rung 10 needs a Hopper GPU (sm_90); this
/// is sm_80"; empty on a compute capability 9.0 device (H100, H200, GH200).
std::string wgmma_unavailable_reason();

/// Rung 0, the peer: cuBLAS, on the same row-major buffers (it computes Cᵀ = Bᵀ·Aᵀ in its
/// column-major terms, which is the same memory).
///
/// TF32: cuBLAS's default math mode does not use TF32 for SGEMM, so sgemm() is a true FP32 peer
/// for rungs 1–7; sgemm_tf32() opts in (CUBLAS_TF32_TENSOR_OP_MATH) and is shown only for
/// reference, never as the peer of an FP32 rung. The environment variable
/// NVIDIA_TF32_OVERRIDE=1 would turn TF32 on behind our back; the stage refuses to time if set.
class Cublas {
 public:
  /// Creates the cuBLAS handle (needs a GPU).
  Cublas();
  ~Cublas();
  Cublas(const Cublas&) = delete;
  Cublas& operator=(const Cublas&) = delete;

  /// FP32 SGEMM, pedantic FP32 (no TF32).
  void sgemm(const float* a, const float* b, float* c, GemmShape shape, cudaStream_t stream);
  /// FP32 inputs with TF32 tensor cores allowed: a reference point, not a fair peer.
  void sgemm_tf32(const float* a, const float* b, float* c, GemmShape shape, cudaStream_t stream);
  /// cublasGemmEx: BF16 inputs, FP32 output and accumulation (the peer of rungs 8 and 9).
  void gemm_bf16(const __nv_bfloat16* a, const __nv_bfloat16* b, float* c, GemmShape shape,
                 cudaStream_t stream);

 private:
  cublasHandle_t handle_ = nullptr;
};

}  // namespace book::gemm_cuda
