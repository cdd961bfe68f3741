// The engine behind gemm.07, gemm.08, gemm.09 and book::gemm::sgemm: the five loops with padded
// edges (see r07_edges.cc for why), alpha and beta, strided (possibly transposed) operands, any
// kernel, and a thread count (see r09_threads.cc). The loop order and the cache each block lives in
// are explained in r06_five_loops.cc.
#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <optional>
#include <thread>
#include <vector>

#include "chapters/01_gemm_cpu/engine/engine.h"
#include "common/buffer.h"

namespace book::gemm {
namespace engine {
namespace {

// Loops 2 and 1 over one packed MC×KC block of A and one packed KC×NC block of B: the A micro-panel
// (MR×KC) stays in L1 while loop 1 streams every B micro-panel past it from L2.
void macro_kernel(const Problem& pr, const KernelSpec& ks, int ic, int mc, int jc, int nc, int kc,
                  float beta, const float* pa, const float* pb) {
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

// Packing buffers kept between calls (they only grow): a fresh 1-3 MiB buffer per call costs a page
// fault per 4 KiB, about 7% of a 1024³ multiply on two cores here. One set per calling thread.
struct Workspace {
  AlignedBuffer<float> a;               // the shared MC×KC block of A
  std::vector<AlignedBuffer<float>> b;  // each thread's KC×NC block of B
};

float* at_least(AlignedBuffer<float>& buffer, std::size_t size) {
  if (buffer.size() < size) buffer = AlignedBuffer<float>(size);
  return buffer.data();
}

//! [team]
// A barrier whose waiters spin for up to 200 µs before they sleep. Waking a sleeping thread takes
// the kernel tens of microseconds (more in a VM), and a 256³ multiply on two cores crosses four
// barriers in about 150 µs; OpenBLAS's threads spin too. std::barrier spins only briefly before it
// sleeps.
class SpinBarrier {
 public:
  explicit SpinBarrier(int count) : count_(count), left_(count) {}

  void arrive_and_wait() {
    const unsigned phase = phase_.load(std::memory_order_acquire);
    if (left_.fetch_sub(1, std::memory_order_acq_rel) == 1) {  // the last to arrive opens it
      left_.store(count_, std::memory_order_relaxed);
      phase_.fetch_add(1, std::memory_order_release);
      phase_.notify_all();
      return;
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(200);
    while (phase_.load(std::memory_order_acquire) == phase) {
      if (std::chrono::steady_clock::now() > deadline) {
        phase_.wait(phase, std::memory_order_acquire);  // sleep until the phase changes
      } else {
        _mm_pause();
      }
    }
  }

 private:
  const int count_;
  std::atomic<int> left_;
  std::atomic<unsigned> phase_{0};
};

// Worker threads kept between calls, as OpenBLAS and BLIS keep theirs: starting a thread costs tens
// of microseconds, 10% or more of a 256³ multiply on two cores (about 150 µs). One team per calling
// thread, so two callers never wait for each other's workers.
class Team {
 public:
  Team() = default;
  Team(const Team&) = delete;
  Team& operator=(const Team&) = delete;
  ~Team() { stop(); }

  // Runs job(0) here and job(1) … job(threads − 1) on the workers; returns when all have finished.
  void run(int threads, const std::function<void(int)>& job) {
    if (threads == 1) return job(0);
    if (threads != size_) start(threads);
    job_ = &job;
    go_->arrive_and_wait();  // the barrier publishes job_ to the workers
    job(0);
    done_->arrive_and_wait();
  }

 private:
  void start(int threads) {
    stop();
    size_ = threads;
    go_.emplace(threads);
    done_.emplace(threads);
    for (int t = 1; t < threads; ++t)
      workers_.emplace_back([this, t] {
        for (;;) {
          go_->arrive_and_wait();
          if (quit_) return;
          (*job_)(t);
          done_->arrive_and_wait();
        }
      });
  }
  void stop() {
    if (workers_.empty()) return;
    quit_ = true;
    go_->arrive_and_wait();
    workers_.clear();  // std::jthread joins
    quit_ = false;
    size_ = 1;
  }

  int size_ = 1;
  std::optional<SpinBarrier> go_, done_;
  std::vector<std::jthread> workers_;
  const std::function<void(int)>* job_ = nullptr;
  bool quit_ = false;
};
//! [team]

}  // namespace

void five_loops(const Problem& pr, const KernelSpec& ks, int threads) {
  const int col_panels = (pr.n + ks.nr - 1) / ks.nr;
  threads = std::clamp(threads, 1, col_panels);  // at least one B micro-panel per thread
  const int kc_max = std::min(ks.kc, pr.k);
  const int mc_max = std::min(ks.mc, (pr.m + ks.mr - 1) / ks.mr * ks.mr);
  static thread_local Workspace workspace;
  static thread_local Team team;
  float* pa = at_least(workspace.a, static_cast<std::size_t>(kc_max) * (mc_max + ks.mr));
  if (static_cast<int>(workspace.b.size()) < threads) workspace.b.resize(threads);
  std::vector<float*> pbs(threads);
  for (int t = 0; t < threads; ++t)
    pbs[t] = at_least(workspace.b[t], static_cast<std::size_t>(kc_max) * (ks.nc + ks.nr));
  std::optional<SpinBarrier> sync;
  if (threads > 1) sync.emplace(threads);

  // Thread t owns a contiguous range of columns of C, a whole number of NR panels, and packs its
  // own blocks of B into its own core's L2; all threads pack slices of the shared A block, with a
  // barrier on either side.
  //! [thread-split]
  const std::function<void(int)> worker = [&](int t) {
    const int col_begin = col_panels * t / threads * ks.nr;
    const int col_end = std::min(pr.n, col_panels * (t + 1) / threads * ks.nr);
    for (int ic = 0; ic < pr.m; ic += ks.mc) {  // loop 5: MC rows
      const int mc = std::min(ks.mc, pr.m - ic);
      const int row_panels = (mc + ks.mr - 1) / ks.mr;
      for (int pc = 0; pc < pr.k; pc += ks.kc) {  // loop 4: KC depth
        const int kc = std::min(ks.kc, pr.k - pc);
        const float beta = pc == 0 ? pr.beta : 1.0f;  // later depths accumulate onto C
        if (sync) sync->arrive_and_wait();            // everyone is done with the previous A block
        const int first = row_panels * t / threads, last = row_panels * (t + 1) / threads;
        if (first < last)
          pack_a(pr.a, ic + first * ks.mr, pc, std::min(mc, last * ks.mr) - first * ks.mr, kc,
                 ks.mr, pa + static_cast<std::size_t>(first) * ks.mr * kc);
        if (sync) sync->arrive_and_wait();                     // the whole A block is packed
        for (int jc = col_begin; jc < col_end; jc += ks.nc) {  // loop 3: NC columns
          const int nc = std::min(ks.nc, col_end - jc);
          pack_b(pr.b, pc, jc, kc, nc, ks.nr, pbs[t]);
          macro_kernel(pr, ks, ic, mc, jc, nc, kc, beta, pa, pbs[t]);
        }
      }
    }
  };
  team.run(threads, worker);
  //! [thread-split]
}

}  // namespace engine
}  // namespace book::gemm
