// gemm.08 — what changed: where the CPU has AVX-512F, a 12×32 kernel on 16-float registers (twice
// the flops per instruction of AVX2, and 32 registers instead of 16 for a bigger tile), chosen at
// run time as OpenBLAS and BLIS do; the binary still runs on AVX2-only CPUs, using gemm.07's
// kernel.
#include "chapters/01_gemm_cpu/engine/engine.h"
#include "chapters/01_gemm_cpu/gemm.h"

namespace book::gemm {

void matmul_avx512(int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c,
                   int ldc) {
  engine::five_loops(engine::plain(m, n, k, a, lda, b, ldb, c, ldc), engine::best_kernel(), 1);
}

}  // namespace book::gemm
