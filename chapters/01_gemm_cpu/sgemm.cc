#include "chapters/01_gemm_cpu/sgemm.h"

#include <algorithm>
#include <atomic>
#include <thread>

#include "chapters/01_gemm_cpu/args.h"
#include "chapters/01_gemm_cpu/engine/engine.h"
#include "common/buffer.h"
#include "common/check.h"
#include "common/timer.h"

namespace book::gemm {
namespace {
std::atomic<int> g_threads{0};
}

void set_sgemm_threads(int threads) {
  BOOK_CHECK(threads >= 0, "set_sgemm_threads: threads must be >= 0 (0 = all), got " << threads);
  g_threads = threads;
}

int sgemm_threads() { return g_threads; }

int sgemm_thread_count() {
  const int threads = g_threads;
  return threads != 0 ? threads
                      : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

void run_on_gemm_threads(int threads, const std::function<void(int thread)>& job) {
  engine::run_jobs(std::max(threads, 1), job);
}

void sgemm(Transpose trans_a, Transpose trans_b, int m, int n, int k, float alpha, const float* a,
           int lda, const float* b, int ldb, float beta, float* c, int ldc) {
  const bool ta = trans_a == Transpose::kYes, tb = trans_b == Transpose::kYes;
  check_gemm_args("sgemm", m, n, k, a, lda, ta ? m : k, b, ldb, tb ? k : n, c, ldc);
  // A transposed operand is the same memory read with its strides swapped; packing absorbs it.
  const engine::Strided a_view = ta ? engine::Strided{a, 1, lda} : engine::Strided{a, lda, 1};
  const engine::Strided b_view = tb ? engine::Strided{b, 1, ldb} : engine::Strided{b, ldb, 1};
  // Threads cost tens of microseconds to start: not worth it below ~1 MFLOP.
  const double flops = 2.0 * m * n * k;
  int threads = sgemm_thread_count();
  if (flops < 2e6) threads = 1;
  engine::five_loops({m, n, k, alpha, a_view, b_view, beta, c, ldc}, engine::best_kernel(),
                     threads);
}

double measure_microkernel_gflops() {
  const engine::KernelSpec& ks = engine::best_kernel();
  constexpr int kSteps = 128;  // A and B panels of 6 + 16 KiB (AVX-512): well inside L1
  AlignedBuffer<float> a(static_cast<std::size_t>(ks.mr) * kSteps, 0.001f),
      b(static_cast<std::size_t>(ks.nr) * kSteps, 0.002f),
      c(static_cast<std::size_t>(ks.mr) * ks.nr);
  const double flops_per_call = 2.0 * ks.mr * ks.nr * kSteps;
  const long calls = static_cast<long>(1e10 / flops_per_call);  // ~0.1 s at 100 GFLOP/s
  double best = 0;
  for (int trial = 0; trial < 5; ++trial) {  // the best of 5: a busy machine only slows it down
    Timer timer;
    for (long call = 0; call < calls; ++call)
      ks.fn(kSteps, a.data(), b.data(), c.data(), ks.nr, 1.0f, 1.0f);  // accumulates: not dead code
    best = std::max(best, flops_per_call * calls / timer.seconds() * 1e-9);
  }
  BOOK_CHECK(c[0] == c[0], "micro-kernel benchmark produced NaN");  // and c is read
  return best;
}

}  // namespace book::gemm
