// The micro-kernels: a register tile of C accumulated with FMAs from packed panels of A and B.
// Why 6×16 with AVX2: 16 ymm registers hold 12 accumulators (6 rows × 2 vectors of 8), 2 vectors of
// B and 1 broadcast of A. Each step does 12 FMAs for 2 loads + 6 broadcasts, enough independent
// FMAs (12 ≥ latency 4 × 2 ports) to keep both FMA units busy.
// Why 12×32 with AVX-512: 32 zmm registers hold 24 accumulators + 2 of B + 1 broadcast.
// Both prefetch their tile of C when they start: C is read (or at least owned) only at the end, and
// at n = 2048 C (16 MiB) is far out of L2, so without the prefetch every tile ends in a cache miss
// per row (the README's rung 7 has what it measured).
#include <immintrin.h>

#include "chapters/01_gemm_cpu/engine/engine.h"
#include "common/cpu.h"

namespace book::gemm::engine {
namespace {

void kernel_6x16_avx2(int kc, const float* __restrict a, const float* __restrict b, float* c,
                      long ldc, float alpha, float beta) {
  __m256 acc[6][2];
#pragma GCC unroll 6
  for (int i = 0; i < 6; ++i) acc[i][0] = acc[i][1] = _mm256_setzero_ps();
#pragma GCC unroll 6
  for (int i = 0; i < 6; ++i) {
    _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc + 15), _MM_HINT_T0);  // if unaligned
  }
  //! [avx2-kernel]
#pragma GCC unroll 4
  for (int p = 0; p < kc; ++p) {
    const __m256 b0 = _mm256_load_ps(b), b1 = _mm256_load_ps(b + 8);
#pragma GCC unroll 6
    for (int i = 0; i < 6; ++i) {
      const __m256 ai = _mm256_broadcast_ss(a + i);
      acc[i][0] = _mm256_fmadd_ps(ai, b0, acc[i][0]);
      acc[i][1] = _mm256_fmadd_ps(ai, b1, acc[i][1]);
    }
    a += 6;
    b += 16;
  }
  //! [avx2-kernel]
  const __m256 va = _mm256_set1_ps(alpha), vb = _mm256_set1_ps(beta);
#pragma GCC unroll 6
  for (int i = 0; i < 6; ++i) {
    float* row = c + i * ldc;
    __m256 r0 = _mm256_mul_ps(va, acc[i][0]), r1 = _mm256_mul_ps(va, acc[i][1]);
    if (beta != 0.0f) {
      r0 = _mm256_fmadd_ps(vb, _mm256_loadu_ps(row), r0);
      r1 = _mm256_fmadd_ps(vb, _mm256_loadu_ps(row + 8), r1);
    }
    _mm256_storeu_ps(row, r0);
    _mm256_storeu_ps(row + 8, r1);
  }
}

}  // namespace

// The engine's own AVX-512 kernel, and the answer to gemm.08.
//! [avx512-kernel]
__attribute__((target("avx512f"))) void kernel_12x32_avx512(int kc, const float* __restrict a,
                                                            const float* __restrict b, float* c,
                                                            long ldc, float alpha, float beta) {
  __m512 acc[12][2];
#pragma GCC unroll 12
  for (int i = 0; i < 12; ++i) acc[i][0] = acc[i][1] = _mm512_setzero_ps();
#pragma GCC unroll 12
  for (int i = 0; i < 12; ++i) {
    _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc + 16), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc + 31), _MM_HINT_T0);
  }
#pragma GCC unroll 4
  for (int p = 0; p < kc; ++p) {
    const __m512 b0 = _mm512_load_ps(b), b1 = _mm512_load_ps(b + 16);
#pragma GCC unroll 12
    for (int i = 0; i < 12; ++i) {
      const __m512 ai = _mm512_set1_ps(a[i]);
      acc[i][0] = _mm512_fmadd_ps(ai, b0, acc[i][0]);
      acc[i][1] = _mm512_fmadd_ps(ai, b1, acc[i][1]);
    }
    a += 12;
    b += 32;
  }
  const __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
#pragma GCC unroll 12
  for (int i = 0; i < 12; ++i) {
    float* row = c + i * ldc;
    __m512 r0 = _mm512_mul_ps(va, acc[i][0]), r1 = _mm512_mul_ps(va, acc[i][1]);
    if (beta != 0.0f) {
      r0 = _mm512_fmadd_ps(vb, _mm512_loadu_ps(row), r0);
      r1 = _mm512_fmadd_ps(vb, _mm512_loadu_ps(row + 16), r1);
    }
    _mm512_storeu_ps(row, r0);
    _mm512_storeu_ps(row + 16, r1);
  }
}
//! [avx512-kernel]

// Block sizes, for a core with 48 KiB L1d and 2 MiB L2 (typical of recent cores), in the loop order
// of the five loops (the README's rung 6):
// KC so that an A micro-panel (MR×KC floats: 6 KiB for AVX2, 24 KiB for AVX-512) sits in at most
//   half of L1, with room for the B micro-panels streaming past it; a larger KC also means C is
//   read and written fewer times (k / KC);
// NC so that the packed B block (KC×NC: 512 KiB for both) stays in L2, a quarter of it, leaving
//   room for the A panels and C passing through;
// MC so that the packed A block (MC×KC: 2-4 MiB) is read from L3, and up to n = 2048 A and B are
//   each packed once: 2052 = 171 × 12 = 342 × 6, the smallest multiple of both MRs from 2048 up,
//   so that every A block is whole micro-panels.
// KC and NC were chosen by measurement, by hand and then with the tune stage
// (`bazel run -c opt //chapters/01_gemm_cpu:tune`, which tries the alternatives for your caches);
// the README's rung 6 has the runs and their numbers.
const KernelSpec kAvx2Kernel{6, 16, 2052, 256, 512, kernel_6x16_avx2};
const KernelSpec kAvx512Kernel{12, 32, 2052, 512, 256, kernel_12x32_avx512};

bool has_avx512() { return cpu_isa() >= Isa::kAvx512; }

const KernelSpec& best_kernel() { return has_avx512() ? kAvx512Kernel : kAvx2Kernel; }

}  // namespace book::gemm::engine
