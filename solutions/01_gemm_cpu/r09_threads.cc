// gemm.09 — what changed: all hardware threads. They split loop 3 (the columns of C): each packs
// its own blocks of B into its own core's L2, and they pack the shared A block together (see
// five_loops in five_loops.cc). Splitting columns, not k, means no two threads ever write the same
// element of C. The threads and the packing buffers are kept between calls.
#include <thread>

#include "chapters/01_gemm_cpu/engine/engine.h"
#include "chapters/01_gemm_cpu/gemm.h"

namespace book::gemm {

void matmul_threads(int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c,
                    int ldc) {
  const int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  engine::five_loops(engine::plain(m, n, k, a, lda, b, ldb, c, ldc), engine::best_kernel(),
                     threads);
}

}  // namespace book::gemm
