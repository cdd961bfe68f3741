// The engine's driver: the five loops with padded edges (edges.cc), alpha and beta, strided
// (possibly transposed) operands, any kernel (kernels.cc) and a thread count. Loops 5, 4 and 3 are
// the per-thread loops (thread_loop.cc, or the track's gemm.09), which ask this file to pack and
// multiply blocks through a ThreadWork; loops 2 and 1 are the macro-kernel below. The loop order
// and the cache each block lives in are explained in the README, rung 6.
#include <algorithm>
#include <functional>
#include <optional>
#include <vector>

#include "chapters/01_gemm_cpu/engine/engine.h"
#include "chapters/01_gemm_cpu/engine/team.h"
#include "common/buffer.h"

namespace book::gemm::engine {

const Pieces kOwnPieces{engine::pack_padded_panel, engine::write_partial_tile,
                        engine::five_loops_thread};

namespace {

// Loops 2 and 1 over one packed MC×KC block of A and one packed KC×NC block of B: the A micro-panel
// (MR×KC) stays in L1 while loop 1 streams every B micro-panel past it from L2.
void macro_kernel(const Problem& pr, const KernelSpec& ks, const Pieces& pieces, int ic, int mc,
                  int jc, int nc, int kc, float beta, const float* pa, const float* pb) {
  alignas(64) float tile[12 * 32];  // the largest MR×NR
  for (int ir = 0; ir < mc; ir += ks.mr) {
    const float* a_panel = pa + static_cast<std::size_t>(ir) * kc;
    const int rows = std::min(ks.mr, mc - ir);
    for (int jr = 0; jr < nc; jr += ks.nr) {
      const float* b_panel = pb + static_cast<std::size_t>(jr) * kc;
      const int cols = std::min(ks.nr, nc - jr);
      float* c_tile = pr.c + (ic + ir) * pr.ldc + jc + jr;
      //! [edges]
      if (rows == ks.mr && cols == ks.nr) {
        ks.fn(kc, a_panel, b_panel, c_tile, pr.ldc, pr.alpha, beta);
        continue;
      }
      // A partial tile: the kernel multiplies the zero-padded panels whole into a buffer, and
      // only the valid corner goes to C.
      ks.fn(kc, a_panel, b_panel, tile, ks.nr, 1.0f, 0.0f);
      pieces.write_partial_tile(tile, ks.nr, rows, cols, pr.alpha, beta, c_tile, pr.ldc);
      //! [edges]
    }
  }
}

// Packing buffers kept between calls (they only grow): a fresh 1-3 MiB buffer per call costs a page
// fault per 4 KiB (the README's rung 9 has what that measured). One set per calling thread.
struct Workspace {
  AlignedBuffer<float> a;               // the shared MC×KC block of A
  std::vector<AlignedBuffer<float>> b;  // each thread's KC×NC block of B
  std::vector<float*> b_data;           // their data, for the threads
};

float* at_least(AlignedBuffer<float>& buffer, std::size_t size) {
  if (buffer.size() < size) buffer = AlignedBuffer<float>(size);
  return buffer.data();
}

// What one call shares between its threads.
struct Shared {
  const Problem& problem;
  const KernelSpec& kernel;
  const Pieces& pieces;
  LoopSizes sizes;
  float* packed_a;       // the shared block of A
  SpinBarrier* barrier;  // null on one thread
};

// The steps the per-thread loops ask for, done for real for one thread.
class EngineWork final : public ThreadWork {
 public:
  EngineWork(const Shared& shared, float* packed_b) : s_(shared), packed_b_(packed_b) {}

  LoopSizes sizes() const override { return s_.sizes; }

  void pack_a(int ic, int pc, int first, int last) override {
    const KernelSpec& ks = s_.kernel;
    const int mc = std::min(ks.mc, s_.problem.m - ic), kc = std::min(ks.kc, s_.problem.k - pc);
    const int rows = std::min(mc, last * ks.mr) - first * ks.mr;
    engine::pack_a(s_.problem.a, ic + first * ks.mr, pc, rows, kc, ks.mr,
                   s_.packed_a + static_cast<std::size_t>(first) * ks.mr * kc,
                   s_.pieces.pack_padded_panel);
  }

  void pack_b(int pc, int jc, int nc) override {
    const int kc = std::min(s_.kernel.kc, s_.problem.k - pc);
    engine::pack_b(s_.problem.b, pc, jc, kc, nc, s_.kernel.nr, packed_b_,
                   s_.pieces.pack_padded_panel);
  }

  void multiply(int ic, int pc, int jc, int nc) override {
    const KernelSpec& ks = s_.kernel;
    const int mc = std::min(ks.mc, s_.problem.m - ic), kc = std::min(ks.kc, s_.problem.k - pc);
    const float beta = pc == 0 ? s_.problem.beta : 1.0f;  // later depths accumulate onto C
    macro_kernel(s_.problem, ks, s_.pieces, ic, mc, jc, nc, kc, beta, s_.packed_a, packed_b_);
  }

  void wait_for_all() override {
    if (s_.barrier) s_.barrier->arrive_and_wait();
  }

 private:
  const Shared& s_;
  float* packed_b_;  // this thread's block of B
};

// The dry run of a per-thread loop that is not the engine's own (check_thread_loop), once per
// loop, shape and thread count in a row: a benchmark or a training step calls the same shape over
// and over, and the check's verdict cannot change between them.
void check_once(decltype(&book::gemm::five_loops_thread) loop, const LoopSizes& sizes,
                int threads) {
  struct Checked {
    decltype(&book::gemm::five_loops_thread) loop = nullptr;
    LoopSizes sizes{};
    int threads = 0;
  };
  static thread_local Checked last;
  const LoopSizes& s = last.sizes;
  if (last.loop == loop && last.threads == threads && s.m == sizes.m && s.n == sizes.n &&
      s.k == sizes.k && s.mr == sizes.mr && s.nr == sizes.nr && s.mc == sizes.mc &&
      s.kc == sizes.kc && s.nc == sizes.nc)
    return;
  check_thread_loop(loop, sizes, threads);  // throws: not remembered
  last = {loop, sizes, threads};
}

}  // namespace

void five_loops(const Problem& pr, const KernelSpec& ks, int threads, const Pieces& pieces) {
  const int col_panels = (pr.n + ks.nr - 1) / ks.nr;
  threads = std::clamp(threads, 1, col_panels);  // at least one B micro-panel per thread
  if (in_parallel_job()) threads = 1;            // one level of threads (run_jobs)
  const LoopSizes sizes{pr.m, pr.n, pr.k, ks.mr, ks.nr, ks.mc, ks.kc, ks.nc};
  if (pieces.five_loops_thread != kOwnPieces.five_loops_thread)
    check_once(pieces.five_loops_thread, sizes, threads);

  const int kc_max = std::min(ks.kc, pr.k);
  const int mc_max = std::min(ks.mc, (pr.m + ks.mr - 1) / ks.mr * ks.mr);
  static thread_local Workspace workspace;
  float* pa = at_least(workspace.a, static_cast<std::size_t>(kc_max) * (mc_max + ks.mr));
  if (static_cast<int>(workspace.b.size()) < threads) {
    workspace.b.resize(threads);
    workspace.b_data.resize(threads);
  }
  std::vector<float*>& pbs = workspace.b_data;
  for (int t = 0; t < threads; ++t)
    pbs[t] = at_least(workspace.b[t], static_cast<std::size_t>(kc_max) * (ks.nc + ks.nr));
  std::optional<SpinBarrier> barrier;
  if (threads > 1) barrier.emplace(threads);

  const Shared shared{pr, ks, pieces, sizes, pa, barrier ? &*barrier : nullptr};
  const std::function<void(int)> job = [&](int t) {
    EngineWork work(shared, pbs[t]);
    pieces.five_loops_thread(t, threads, work);
  };
  team_of_this_thread().run(threads, job);
}

}  // namespace book::gemm::engine
