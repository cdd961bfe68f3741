// Rung 10, wgmma + TMA (Hopper, sm_90a only): what changed from rung 9 — the MMA is issued by a
// whole warpgroup (128 threads) as `wgmma.mma_async`, which reads BOTH operands straight from
// shared memory through 64-bit matrix descriptors (no ldmatrix, no operand registers), and tiles
// are copied by the Tensor Memory Accelerator (`cp.async.bulk.tensor`, one thread issues a whole
// 128 × 64 box) into a 4-stage ring guarded by mbarriers: a producer warpgroup fills stages, two
// consumer warpgroups drain them. TMA writes the tiles with the 128-byte swizzle, which the
// descriptors declare, so wgmma's reads are free of bank conflicts without padding.
//
// Edges: TMA zero-fills every part of a box outside the matrix, so ragged m, n, k need no code
// here; the epilogue masks its stores. TMA cannot describe rows whose byte length is not a
// multiple of 16 (k or n not a multiple of 8 for BF16) or unaligned base pointers: for those the
// launcher runs rung 9 instead, explicitly (wgmma_tma_unsupported() says why).
//
// Compiled, not yet run on a GPU: the bit-level parts (descriptors, swizzle, fragment, boxes)
// are plain C++ in wgmma.h, checked on the CPU by tests/02_gemm_cuda/wgmma_test.cc.
#include <cuda.h>          // CUtensorMap and its enums: types only; the function comes via cudart
#include <cudaTypedefs.h>  // PFN_cuTensorMapEncodeTiled
#include <cuda_bf16.h>

#include <cstdint>
#include <string>

#include "chapters/02_gemm_cuda/device_tiles.cuh"
#include "chapters/02_gemm_cuda/kernels.h"
#include "chapters/02_gemm_cuda/wgmma.h"

// wgmma exists only on sm_90a (TMA and mbarrier byte counts on sm_90 and later); this file is
// built for sm_90a alone (see BUILD). The guard keeps it valid if some other target ever
// compiles it: the kernel is then empty, and the launcher refuses to run anywhere but compute
// capability 9.0.
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define BOOK_HOPPER_DEVICE_CODE 1
#endif

namespace book::gemm_cuda {
namespace {

using W = WgmmaTile;
using bf16 = __nv_bfloat16;

#if defined(BOOK_HOPPER_DEVICE_CODE)

__device__ __forceinline__ std::uint32_t smem_address(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

// ---- mbarriers: a phase completes when `count` arrivals and the expected bytes have landed.

__device__ __forceinline__ void mbarrier_init(std::uint32_t bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
// The producer's arrival: one arrival, plus `bytes` the TMA copies will deliver to this phase.
__device__ __forceinline__ void mbarrier_arrive_expect_tx(std::uint32_t bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes)
               : "memory");
}
__device__ __forceinline__ void mbarrier_arrive(std::uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
// Waits until the phase of parity `parity` has completed (phase n has parity n & 1).
__device__ __forceinline__ void mbarrier_wait(std::uint32_t bar, unsigned parity) {
  unsigned done = 0;
  do {
    asm volatile(
        "{\n .reg .pred p;\n"
        " mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        " selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
  } while (!done);
}

// ---- TMA: one thread copies a whole box; its bytes count towards the mbarrier's phase.

__device__ __forceinline__ void tma_load_2d(std::uint32_t dst, const CUtensorMap* map, int col,
                                            int row, std::uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3}], [%4];\n" ::"r"(dst),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(col), "r"(row), "r"(bar)
      : "memory");
}

// ---- wgmma: m64n128k16, BF16 × BF16 → FP32, A K-major, B MN-major (transposed), D += A·B.

__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void wgmma_wait_all() {
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
}
// Tells the compiler that the accumulators may have changed here, so no read of them is moved
// above the wait (the hardware writes them asynchronously; nothing else says so in C++).
__device__ __forceinline__ void fence_accumulators(float (&d)[W::kAccumulators]) {
#pragma unroll
  for (int i = 0; i < W::kAccumulators; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

#define BOOK_D8(i)                                                                            \
  "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), \
      "+f"(d[i + 6]), "+f"(d[i + 7])

__device__ __forceinline__ void wgmma_m64n128k16(float (&d)[W::kAccumulators], std::uint64_t a_desc,
                                                 std::uint64_t b_desc) {
  // scale-d (a predicate) true: D += A·B; scale-a = scale-b = 1; transpose-a = 0 (A K-major),
  // transpose-b = 1 (B MN-major).
  asm volatile(
      "{\n .reg .pred accumulate;\n setp.ne.b32 accumulate, 1, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "
      "%64, %65, accumulate, 1, 1, 0, 1;\n}\n"
      : BOOK_D8(0), BOOK_D8(8), BOOK_D8(16), BOOK_D8(24), BOOK_D8(32), BOOK_D8(40), BOOK_D8(48),
        BOOK_D8(56)
      : "l"(a_desc), "l"(b_desc)
      : "memory");
}
#undef BOOK_D8

#endif  // BOOK_HOPPER_DEVICE_CODE

// One block computes a 128 × 128 tile of C. Warpgroup 0 is the producer (its thread 0 issues
// the TMA copies); warpgroups 1 and 2 are consumers, each owning 64 rows of the tile.
__global__ void __launch_bounds__(W::kThreads, 1)
    wgmma_tma_kernel(const __grid_constant__ CUtensorMap a_map,
                     const __grid_constant__ CUtensorMap b_map, float* __restrict__ c,
                     GemmShape s) {
#if defined(BOOK_HOPPER_DEVICE_CODE)
  extern __shared__ unsigned char smem[];
  __shared__ alignas(8) std::uint64_t full[W::kStages], empty[W::kStages];
  // The swizzle pattern is a function of the address: start the ring on a 1024-byte boundary.
  const std::uint32_t ring = (smem_address(smem) + W::kAtomBytes - 1) & ~(W::kAtomBytes - 1u);
  auto a_stage = [&](int stage) { return ring + stage * W::kStageBytes; };
  auto b_stage = [&](int stage) { return ring + stage * W::kStageBytes + W::kStageABytes; };
  const int row0 = blockIdx.y * W::kBM, col0 = blockIdx.x * W::kBN;
  const int warpgroup = threadIdx.x / W::kWarpgroup;
  const int k_tiles = ceil_div(s.k, W::kBK);

  if (threadIdx.x == 0) {
    for (int stage = 0; stage < W::kStages; ++stage) {
      mbarrier_init(smem_address(&full[stage]), 1);  // the producer's arrive.expect_tx
      mbarrier_init(smem_address(&empty[stage]), W::kConsumers * W::kWarpgroup);
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();  // the last block-wide barrier: the producer's idle threads may leave

  //! [producer-consumer]
  if (warpgroup == 0) {
    if (threadIdx.x != 0) return;
    // A B box wholly right of the matrix (n ≤ col0 + 64) is not fetched: the stale shared
    // memory it leaves feeds only columns of C that the epilogue never stores.
    const int b_slabs = min(W::kBSlabs, ceil_div(s.n - col0, W::kBoxCols));
    const unsigned stage_bytes = W::kStageABytes + b_slabs * W::kBSlabBytes;
    for (int kt = 0; kt < k_tiles; ++kt) {
      const int stage = wgmma_stage(kt);
      // Refill a stage only after both consumers released its previous use (tile kt − kStages).
      if (wgmma_producer_waits(kt))
        mbarrier_wait(smem_address(&empty[stage]), wgmma_empty_parity(kt));
      const std::uint32_t bar = smem_address(&full[stage]);
      mbarrier_arrive_expect_tx(bar, stage_bytes);  // whole boxes, their zero fill included
      tma_load_2d(a_stage(stage), &a_map, kt * W::kBK, row0, bar);
      for (int slab = 0; slab < b_slabs; ++slab)
        tma_load_2d(b_stage(stage) + slab * W::kBSlabBytes, &b_map, col0 + wgmma_b_box_col(slab),
                    kt * W::kBK, bar);
    }
    return;
  }
  const int consumer = warpgroup - 1;
  float d[W::kAccumulators] = {};
  for (int kt = 0; kt < k_tiles; ++kt) {
    const int stage = wgmma_stage(kt);
    mbarrier_wait(smem_address(&full[stage]), wgmma_full_parity(kt));  // tile kt has landed
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < W::kBK / W::kInstrK; ++kk)
      wgmma_m64n128k16(d, wgmma_a_descriptor(a_stage(stage), consumer, kk),
                       wgmma_b_descriptor(b_stage(stage), kk));
    wgmma_commit();
    wgmma_wait_all();  // this stage's MMAs are done: operands read, accumulators written
    fence_accumulators(d);
    mbarrier_arrive(smem_address(&empty[stage]));  // ... so the producer may overwrite it
  }
  //! [producer-consumer]

  // Epilogue: each accumulator to its element of C, masked at the edges.
  const int t = threadIdx.x % W::kWarpgroup;
#pragma unroll
  for (int reg = 0; reg < W::kAccumulators; ++reg) {
    const Coord e = wgmma_accumulator(t, reg);
    const float v[1] = {d[reg]};
    write_chunk<1>(c, s.n, s.m, s.n, row0 + consumer * W::kInstrM + e.row, col0 + e.col, true, v);
  }
#endif  // BOOK_HOPPER_DEVICE_CODE
}

// cuTensorMapEncodeTiled is a driver-API function; asking the runtime for its address keeps the
// book from linking libcuda directly (the driver is loaded by cudart anyway).
PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
  static const PFN_cuTensorMapEncodeTiled_v12000 encode = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
    BOOK_CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000,
                                                     cudaEnableDefault, &found));
    BOOK_CHECK(found == cudaDriverEntryPointSuccess && fn != nullptr,
               "the CUDA driver has no cuTensorMapEncodeTiled (it needs CUDA 12.0 or newer)");
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
  }();
  return encode;
}

// A row-major BF16 matrix of `rows` × `cols` as a TMA tensor map with boxes of box_rows ×
// box_cols, 128-byte swizzle, zeros outside the matrix.
CUtensorMap tensor_map(const bf16* base, int rows, int cols, int box_rows, int box_cols) {
  CUtensorMap map;
  const cuuint64_t dims[2] = {cuuint64_t(cols), cuuint64_t(rows)};  // innermost first
  const cuuint64_t strides[1] = {cuuint64_t(cols) * sizeof(bf16)};  // bytes, rows 1…
  const cuuint32_t box[2] = {cuuint32_t(box_cols), cuuint32_t(box_rows)};
  const cuuint32_t element_strides[2] = {1, 1};
  const CUresult status = tensor_map_encoder()(
      &map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, const_cast<bf16*>(base), dims, strides, box,
      element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
      CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  BOOK_CHECK(status == CUDA_SUCCESS, "cuTensorMapEncodeTiled failed (CUresult "
                                         << int(status) << ") for a " << rows << "x" << cols
                                         << " BF16 matrix with " << box_rows << "x" << box_cols
                                         << " boxes");
  return map;
}

}  // namespace

std::string wgmma_unavailable_reason() {
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    cudaGetLastError();  // clear it: this is a question, not a failure
    return "rung 10 needs a Hopper GPU (sm_90); no CUDA device is usable here";
  }
  int major = 0, minor = 0;
  BOOK_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  BOOK_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  if (major == 9 && minor == 0) return "";
  return "rung 10 needs a Hopper GPU (sm_90); this is sm_" + std::to_string(major) +
         std::to_string(minor);
}

void gemm_bf16_wgmma(const bf16* a, const bf16* b, float* c, GemmShape s, cudaStream_t stream) {
  check_gemm_args(a, b, c, s);
  const std::string unavailable = wgmma_unavailable_reason();
  BOOK_CHECK(unavailable.empty(), unavailable << " (wgmma and TMA exist only there; the binary "
                                                 "holds rung 10 for sm_90a alone)");
  if (wgmma_tma_unsupported(s, reinterpret_cast<std::uintptr_t>(a),
                            reinterpret_cast<std::uintptr_t>(b)) != nullptr) {
    gemm_bf16_mma(a, b, c, s, stream);  // rung 9: TMA cannot describe these rows
    return;
  }
  const CUtensorMap a_map = tensor_map(a, s.m, s.k, W::kBM, W::kBoxCols);
  const CUtensorMap b_map = tensor_map(b, s.k, s.n, W::kBK, W::kBoxCols);
  BOOK_CUDA_CHECK(cudaFuncSetAttribute(wgmma_tma_kernel,
                                       cudaFuncAttributeMaxDynamicSharedMemorySize, W::kSmemBytes));
  const dim3 grid(ceil_div(s.n, W::kBN), ceil_div(s.m, W::kBM));
  wgmma_tma_kernel<<<grid, W::kThreads, W::kSmemBytes, stream>>>(a_map, b_map, c, s);
  BOOK_LAUNCH_CHECK("rung 10 (wgmma_tma)");
}

}  // namespace book::gemm_cuda
