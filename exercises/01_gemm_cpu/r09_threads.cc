// gemm.09 — your turn: loops 5, 4 and 3 of the five loops as one of `threads` threads runs them
// (the contract is in chapters/01_gemm_cpu/gemm.h). The engine runs this function on every thread
// at once and does each step you ask for through `work`: pack_a (your share of the shared block
// of A), pack_b (a block of B into your own buffer), multiply (loops 2 and 1), wait_for_all (a
// barrier). Decide which columns of C this thread owns (whole NR-wide micro-panels, the counts
// even), which micro-panels of each block of A it packs, and where the threads must wait for each
// other. The engine first runs your loops once without doing any work and refuses (with a
// message) loops whose threads pass different numbers of barriers.
#include "chapters/01_gemm_cpu/gemm.h"
#include "common/check.h"

namespace book::gemm {

void five_loops_thread(int thread, int threads, ThreadWork& work) {
  (void)thread, (void)threads, (void)work;
  BOOK_NOT_IMPLEMENTED("gemm.09", "exercises/01_gemm_cpu/r09_threads.cc",
                       "chapters/01_gemm_cpu/README.md, section Rung 9: threads");
}

}  // namespace book::gemm
