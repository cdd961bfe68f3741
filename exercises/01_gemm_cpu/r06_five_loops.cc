// gemm.06 — your turn: the BLIS loops MC / KC (pack A) / NC (pack B) / MR / NR around the
// micro-kernel. C = A·B, row-major, C overwritten and never read, nothing written past column n
// (see gemm.h).
#include "chapters/01_gemm_cpu/gemm.h"
#include "common/check.h"

namespace book::gemm {

void matmul_five_loops(int m, int n, int k, const float* a, int lda, const float* b, int ldb,
                       float* c, int ldc) {
  (void)m, (void)n, (void)k, (void)a, (void)lda, (void)b, (void)ldb, (void)c, (void)ldc;
  BOOK_NOT_IMPLEMENTED("gemm.06", "exercises/01_gemm_cpu/r06_five_loops.cc",
                       "chapters/01_gemm_cpu/README.md, section Rung 6: the five loops");
}

}  // namespace book::gemm
