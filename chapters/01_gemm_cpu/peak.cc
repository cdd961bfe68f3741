// The machine's ceilings, measured: FMA throughput (compute roof) and triad bandwidth (memory
// roof).
#include "chapters/01_gemm_cpu/peak.h"

#include <immintrin.h>
#include <sys/mman.h>

#include <algorithm>
#include <barrier>
#include <chrono>
#include <cstddef>
#include <thread>
#include <vector>

#include "common/buffer.h"
#include "common/check.h"
#include "common/cpu.h"

namespace book::gemm {
namespace {

// Runs fn(thread_index) on `threads` threads that start together; returns the wall time from the
// first start to the last finish, so the rate is what all of them sustain at once. Each thread
// reads the clock itself: a timer started by the launching thread after the barrier would miss
// whatever a worker did before the launcher was scheduled again (all of it, under chrt -f).
template <typename Fn>
double run_together(int threads, Fn fn) {
  using Clock = std::chrono::steady_clock;
  std::barrier start(threads);
  std::vector<Clock::time_point> began(threads), ended(threads);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      start.arrive_and_wait();
      began[t] = Clock::now();
      fn(t);
      ended[t] = Clock::now();
    });
  for (auto& thread : pool) thread.join();
  const auto first = *std::min_element(began.begin(), began.end());
  const auto last = *std::max_element(ended.begin(), ended.end());
  return std::chrono::duration<double>(last - first).count();
}

// 12 independent chains: an FMA has a latency of 4 cycles and two FMA ports issue one each per
// cycle on recent Intel and AMD cores, so at least 8 chains must be in flight; 12 leaves margin.
constexpr int kChains = 12;
constexpr long kIterations = 10'000'000;  // ~0.1-0.3 s per trial at typical clocks
volatile float g_sink;

float fma_chains_avx2(long iterations) {
  __m256 acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = _mm256_set1_ps(0.001f * c);
  const __m256 x = _mm256_set1_ps(0.999999f), y = _mm256_set1_ps(1e-7f);
  for (long i = 0; i < iterations; ++i)
#pragma GCC unroll 12
    for (int c = 0; c < kChains; ++c) acc[c] = _mm256_fmadd_ps(acc[c], x, y);
  __m256 sum = acc[0];
  for (int c = 1; c < kChains; ++c) sum = _mm256_add_ps(sum, acc[c]);
  return _mm256_cvtss_f32(sum);
}

__attribute__((target("avx512f"))) float fma_chains_avx512(long iterations) {
  __m512 acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = _mm512_set1_ps(0.001f * c);
  const __m512 x = _mm512_set1_ps(0.999999f), y = _mm512_set1_ps(1e-7f);
  for (long i = 0; i < iterations; ++i)
#pragma GCC unroll 12
    for (int c = 0; c < kChains; ++c) acc[c] = _mm512_fmadd_ps(acc[c], x, y);
  __m512 sum = acc[0];
  for (int c = 1; c < kChains; ++c) sum = _mm512_add_ps(sum, acc[c]);
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, sum);
  return lanes[0] + lanes[15];
}

template <typename Kernel>
double peak_gflops(int threads, int lanes, Kernel kernel) {
  const long iterations = kIterations;
  double best = 0;
  for (int trial = 0; trial < 5; ++trial) {  // the best of 5: a busy machine only slows it down
    const double seconds = run_together(threads, [&](int) { g_sink = kernel(iterations); });
    const double flops = 2.0 * lanes * kChains * static_cast<double>(iterations) * threads;
    best = std::max(best, flops / seconds * 1e-9);
  }
  return best;
}

}  // namespace

double measure_fp32_peak_gflops(int threads) {
  BOOK_CHECK(threads >= 1, "measure_fp32_peak_gflops: threads must be >= 1, got " << threads);
  return peak_gflops(threads, 8, fma_chains_avx2);
}

double measure_fp32_peak_gflops_avx512(int threads) {
  BOOK_CHECK(threads >= 1,
             "measure_fp32_peak_gflops_avx512: threads must be >= 1, got " << threads);
  if (cpu_isa() < Isa::kAvx512) return 0.0;
  return peak_gflops(threads, 16, fma_chains_avx512);
}

double measure_triad_bandwidth_gbs(int threads) {
  BOOK_CHECK(threads >= 1, "measure_triad_bandwidth_gbs: threads must be >= 1, got " << threads);
  // 3 arrays × 128 MiB: several times any L3 a laptop or a server core-share has.
  const std::size_t n = std::size_t{1} << 25;
  AlignedBuffer<float> a(n), b(n), c(n);
  auto range = [&](int t) { return std::pair{n * t / threads, n * (t + 1) / threads}; };
  // First touch by the thread that will use each page (matters on multi-socket machines).
  run_together(threads, [&](int t) {
    auto [lo, hi] = range(t);
    for (std::size_t i = lo; i < hi; ++i) a[i] = 0.0f, b[i] = 1.0f, c[i] = 2.0f;
  });
  double best = 0;
  const float s = 3.0f;
  for (int trial = 0; trial < 5; ++trial) {
    const double seconds = run_together(threads, [&](int t) {
      auto [lo, hi] = range(t);
      float* __restrict pa = a.data();
      const float* __restrict pb = b.data();
      const float* __restrict pc = c.data();
      const float scale = s;  // a local copy: through the captured reference it would be reloaded
      for (std::size_t i = lo; i < hi; ++i) pa[i] = pb[i] + scale * pc[i];
    });
    best = std::max(best, 12.0 * static_cast<double>(n) / seconds * 1e-9);
  }
  g_sink = a[n / 2];
  return best;
}

double measure_read_bandwidth_gbs(int threads) {
  BOOK_CHECK(threads >= 1, "measure_read_bandwidth_gbs: threads must be >= 1, got " << threads);
  const std::size_t n = std::size_t{1} << 27;  // 512 MiB of floats
  // On 2 MiB pages where the kernel allows it (a reader of big weights asks for them too), so
  // that TLB misses do not lower the ceiling.
  AlignedBuffer<float, std::size_t{2} << 20> a(n);
  madvise(a.data(), n * sizeof(float), MADV_HUGEPAGE);
  // Parts of whole 64-float runs (the loop's step), so every part starts on a cache line.
  auto range = [&](int t) {
    return std::pair{n / 64 * t / threads * 64, n / 64 * (t + 1) / threads * 64};
  };
  run_together(threads, [&](int t) {  // first touch by the reading thread
    auto [lo, hi] = range(t);
    for (std::size_t i = lo; i < hi; ++i) a[i] = 1.0f;
  });
  std::vector<float> sums(threads);
  double best = 0;
  for (int trial = 0; trial < 5; ++trial) {
    const double seconds = run_together(threads, [&](int t) {
      auto [lo, hi] = range(t);
      const float* p = a.data();
      __m256 acc[8];
      for (auto& v : acc) v = _mm256_setzero_ps();
      for (std::size_t i = lo; i < hi; i += 64)
#pragma GCC unroll 8
        for (int k = 0; k < 8; ++k) acc[k] = _mm256_add_ps(acc[k], _mm256_load_ps(p + i + 8 * k));
      for (int k = 1; k < 8; ++k) acc[0] = _mm256_add_ps(acc[0], acc[k]);
      sums[t] = _mm256_cvtss_f32(acc[0]);
    });
    best = std::max(best, 4.0 * static_cast<double>(n) / seconds * 1e-9);
  }
  g_sink = sums[0];
  return best;
}

}  // namespace book::gemm
