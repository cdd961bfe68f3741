// gemm.09 — what changed: all hardware threads. They split loop 3 (the columns of C): each packs
// its own blocks of B into its own core's L2, and they pack the shared block of A together, with a
// barrier on either side. Splitting columns, not k, means no two threads ever write the same
// element of C. The threads and the packing buffers are kept between calls (the engine's team).
//
// The answer is the engine's own per-thread loops (chapters/01_gemm_cpu/engine/thread_loop.cc,
// shown in the README): sgemm runs them whichever track is built, so they live in the chapter, and
// this file plugs them into the solution track.
#include "chapters/01_gemm_cpu/engine/engine.h"
#include "chapters/01_gemm_cpu/gemm.h"

namespace book::gemm {

void five_loops_thread(int thread, int threads, ThreadWork& work) {
  engine::five_loops_thread(thread, threads, work);
}

}  // namespace book::gemm
