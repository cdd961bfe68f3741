// gemm.08 — your turn: the 12×32 AVX-512 micro-kernel (the contract is in
// chapters/01_gemm_cpu/gemm.h). Keep the tile of C in 24 zmm accumulators (12 rows × 2 vectors of
// 16); each step of k loads 32 floats of B into 2 registers (_mm512_load_ps: the panels are
// aligned), broadcasts each of the 12 floats of A (_mm512_set1_ps) and does 24 _mm512_fmadd_ps.
// At the end, C = alpha * acc + beta * C with unaligned loads and stores, reading C only when
// beta != 0. Define it with __attribute__((target("avx512f"))) so this file still builds for
// AVX2 CPUs; rung 8 runs the engine (one thread) with your kernel where the CPU has AVX-512F.
#include "chapters/01_gemm_cpu/gemm.h"
#include "common/check.h"

namespace book::gemm {

void kernel_12x32_avx512(int kc, const float* a, const float* b, float* c, long ldc, float alpha,
                         float beta) {
  (void)kc, (void)a, (void)b, (void)c, (void)ldc, (void)alpha, (void)beta;
  BOOK_NOT_IMPLEMENTED("gemm.08", "exercises/01_gemm_cpu/r08_avx512.cc",
                       "chapters/01_gemm_cpu/README.md, section Rung 8: AVX-512");
}

}  // namespace book::gemm
