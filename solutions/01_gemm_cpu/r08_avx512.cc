// gemm.08 — what changed: where the CPU has AVX-512F, a 12×32 kernel on 16-float registers (twice
// the flops per instruction of AVX2, and 32 registers instead of 16 for a bigger tile), chosen at
// run time as OpenBLAS and BLIS do; the binary still runs on AVX2-only CPUs, using gemm.07's
// kernel.
//
// The answer is the engine's own kernel (chapters/01_gemm_cpu/engine/kernels.cc, shown in the
// README): sgemm runs it whichever track is built, so it lives in the chapter, and this file plugs
// it into the solution track.
#include "chapters/01_gemm_cpu/engine/engine.h"
#include "chapters/01_gemm_cpu/gemm.h"

namespace book::gemm {

void kernel_12x32_avx512(int kc, const float* a, const float* b, float* c, long ldc, float alpha,
                         float beta) {
  engine::kernel_12x32_avx512(kc, a, b, c, ldc, alpha, beta);
}

}  // namespace book::gemm
