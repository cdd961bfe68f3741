// The engine behind gemm.07, gemm.08, gemm.09 and book::gemm::sgemm: the five loops with padded
// edges (see r07_edges.cc for why), alpha and beta, strided (possibly transposed) operands, any
// kernel, and a thread count (see r09_threads.cc).
#include <algorithm>
#include <barrier>
#include <optional>
#include <thread>
#include <vector>

#include "common/buffer.h"
#include "solutions/01_gemm_cpu/blis.h"

namespace book::gemm {
namespace detail {
namespace {

// Loops 2 and 1 over one packed MC×KC block of A and one packed KC×NC block of B.
void macro_kernel(const Problem& pr, const KernelSpec& ks, int ic, int mc, int jc, int nc, int kc,
                  float beta, const float* pa, const float* pb) {
  alignas(64) float tile[12 * 32];  // the largest MR×NR
  for (int jr = 0; jr < nc; jr += ks.nr) {
    const float* b_panel = pb + static_cast<std::size_t>(jr) * kc;
    const int cols = std::min(ks.nr, nc - jr);
    for (int ir = 0; ir < mc; ir += ks.mr) {
      const float* a_panel = pa + static_cast<std::size_t>(ir) * kc;
      const int rows = std::min(ks.mr, mc - ir);
      float* c_tile = pr.c + (ic + ir) * pr.ldc + jc + jr;
      //! [edges]
      if (rows == ks.mr && cols == ks.nr) {
        ks.fn(kc, a_panel, b_panel, c_tile, pr.ldc, pr.alpha, beta);
        continue;
      }
      ks.fn(kc, a_panel, b_panel, tile, ks.nr, 1.0f, 0.0f);  // full tile into the buffer
      for (int i = 0; i < rows; ++i)
        for (int j = 0; j < cols; ++j) {
          float& out = c_tile[i * pr.ldc + j];
          const float product = pr.alpha * tile[i * ks.nr + j];
          out = beta == 0.0f ? product : product + beta * out;
        }
      //! [edges]
    }
  }
}

}  // namespace

void five_loops(const Problem& pr, const KernelSpec& ks, int threads) {
  const int row_panels = (pr.m + ks.mr - 1) / ks.mr;
  threads = std::clamp(threads, 1, row_panels);
  const int kc_max = std::min(ks.kc, pr.k);
  const int nc_max = std::min(ks.nc, (pr.n + ks.nr - 1) / ks.nr * ks.nr);
  AlignedBuffer<float> pb(static_cast<std::size_t>(kc_max) * nc_max);
  std::optional<std::barrier<>> sync;
  if (threads > 1) sync.emplace(threads);

  // Thread t owns a contiguous range of rows of C, a whole number of MR panels, and packs its own
  // blocks of A; all threads pack slices of the shared B block, with a barrier on either side.
  //! [thread-split]
  auto worker = [&](int t) {
    const int row_begin = row_panels * t / threads * ks.mr;
    const int row_end = std::min(pr.m, row_panels * (t + 1) / threads * ks.mr);
    AlignedBuffer<float> pa(static_cast<std::size_t>(kc_max) * (ks.mc + ks.mr));
    for (int jc = 0; jc < pr.n; jc += ks.nc) {  // loop 5
      const int nc = std::min(ks.nc, pr.n - jc);
      const int col_panels = (nc + ks.nr - 1) / ks.nr;
      for (int pc = 0; pc < pr.k; pc += ks.kc) {  // loop 4
        const int kc = std::min(ks.kc, pr.k - pc);
        const float beta = pc == 0 ? pr.beta : 1.0f;  // later depths accumulate onto C
        if (sync) sync->arrive_and_wait();            // everyone is done with the previous B block
        const int first = col_panels * t / threads, last = col_panels * (t + 1) / threads;
        if (first < last)
          pack_b(pr.b, pc, jc + first * ks.nr, kc, std::min(nc, last * ks.nr) - first * ks.nr,
                 ks.nr, pb.data() + static_cast<std::size_t>(first) * ks.nr * kc);
        if (sync) sync->arrive_and_wait();                     // the whole B block is packed
        for (int ic = row_begin; ic < row_end; ic += ks.mc) {  // loop 3
          const int mc = std::min(ks.mc, row_end - ic);
          pack_a(pr.a, ic, pc, mc, kc, ks.mr, pa.data());
          macro_kernel(pr, ks, ic, mc, jc, nc, kc, beta, pa.data(), pb.data());
        }
      }
    }
  };
  if (threads == 1) return worker(0);
  std::vector<std::jthread> team;
  for (int t = 1; t < threads; ++t) team.emplace_back(worker, t);
  worker(0);
  //! [thread-split]
}

}  // namespace detail
}  // namespace book::gemm
