// The engine's own per-thread loops, and the answer to gemm.09. The threads split loop 3, the
// columns of C: each packs its own blocks of B into its own core's L2, and they pack the shared
// block of A together, with a barrier on either side. Splitting columns, not k, means no two
// threads ever write the same element of C: no reduction, no atomics.
#include <algorithm>

#include "chapters/01_gemm_cpu/engine/engine.h"

namespace book::gemm::engine {

//! [thread-split]
void five_loops_thread(int thread, int threads, ThreadWork& work) {
  const LoopSizes s = work.sizes();
  // A contiguous range of whole NR-wide micro-panels of C's columns: the counts differ by one at
  // most, and only the last tile of C can be partial.
  const int col_panels = (s.n + s.nr - 1) / s.nr;
  const int col_begin = col_panels * thread / threads * s.nr;
  const int col_end = std::min(s.n, col_panels * (thread + 1) / threads * s.nr);
  for (int ic = 0; ic < s.m; ic += s.mc) {  // loop 5: MC rows
    const int row_panels = (std::min(s.mc, s.m - ic) + s.mr - 1) / s.mr;
    for (int pc = 0; pc < s.k; pc += s.kc) {  // loop 4: KC depth
      work.wait_for_all();                    // everyone is done with the previous block of A
      const int first = row_panels * thread / threads, last = row_panels * (thread + 1) / threads;
      if (first < last) work.pack_a(ic, pc, first, last);   // this thread's share of the block
      work.wait_for_all();                                  // the whole block of A is packed
      for (int jc = col_begin; jc < col_end; jc += s.nc) {  // loop 3: NC columns
        const int nc = std::min(s.nc, col_end - jc);
        work.pack_b(pc, jc, nc);  // into this thread's own buffer
        work.multiply(ic, pc, jc, nc);
      }
    }
  }
}
//! [thread-split]

}  // namespace book::gemm::engine
