#include "chapters/01_gemm_cpu/sgemm.h"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
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

SgemmThreads::SgemmThreads(int threads) : previous_(g_threads) {
  BOOK_CHECK(threads >= 0, "SgemmThreads: threads must be >= 0 (0 = all), got " << threads);
  g_threads = threads;
}

SgemmThreads::~SgemmThreads() { g_threads = previous_; }

int sgemm_threads() { return g_threads; }

namespace {

// The elements a row-major rows×cols matrix with leading dimension ld (>= cols) occupies: rows
// runs of cols floats, ld apart, in increasing address order.
struct Storage {
  std::uintptr_t first;  // byte address of element (0, 0)
  int rows, cols, ld;
  std::uintptr_t row_begin(int i) const { return first + std::uintptr_t(i) * ld * sizeof(float); }
  std::uintptr_t row_end(int i) const {
    return row_begin(i) + std::uintptr_t(cols) * sizeof(float);
  }
};

Storage storage_of(const float* p, int rows, int cols, int ld) {
  return {reinterpret_cast<std::uintptr_t>(p), rows, cols, ld};
}

// Whether x and y share a byte. The whole spans decide most calls; where they overlap (two
// matrices interleaved in the columns of one padded buffer, say), each row run of x is compared
// with the one run of y that could meet it: y's runs are disjoint and increasing, so the last run
// starting before x's run ends is the only candidate. O(x.rows), exact.
bool overlap(const Storage& x, const Storage& y) {
  if (!(x.first < y.row_end(y.rows - 1) && y.first < x.row_end(x.rows - 1))) return false;
  const std::uintptr_t y_stride = std::uintptr_t(y.ld) * sizeof(float);
  for (int i = 0; i < x.rows; ++i) {
    const std::uintptr_t begin = x.row_begin(i), end = x.row_end(i);
    if (end <= y.first) continue;  // before all of y
    const std::uintptr_t candidate =
        std::min<std::uintptr_t>((end - 1 - y.first) / y_stride, std::uintptr_t(y.rows - 1));
    if (y.row_end(int(candidate)) > begin) return true;
  }
  return false;
}

// C = beta * C without reading A or B (BLAS: k == 0 or alpha == 0). beta == 0 writes zeros
// without reading C, so NaN in C does not survive, as everywhere else in sgemm.
void scale_c(int m, int n, float beta, float* c, int ldc) {
  for (int i = 0; i < m; ++i) {
    float* row = c + static_cast<std::size_t>(i) * ldc;
    for (int j = 0; j < n; ++j) row[j] = beta == 0 ? 0.0f : beta * row[j];
  }
}

}  // namespace

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
  for (const Transpose t : {trans_a, trans_b})
    BOOK_CHECK(t == Transpose::kNo || t == Transpose::kYes,
               "sgemm: a Transpose must be kNo or kYes, got the value "
                   << static_cast<int>(t) << " (trans_a=" << static_cast<int>(trans_a)
                   << ", trans_b=" << static_cast<int>(trans_b) << ")");
  BOOK_CHECK(m >= 0 && n >= 0 && k >= 0, "sgemm: sizes must not be negative, got m="
                                             << m << " n=" << n << " k=" << k
                                             << " (C is m×n, the inner dimension is k)");
  // BLAS's quick returns: an empty C is nothing to do; with k == 0 or alpha == 0 the product is
  // zero and A and B are not read (NaN or Inf in them does not reach C).
  if (m == 0 || n == 0) return;
  if (k == 0 || alpha == 0) {
    BOOK_CHECK(c != nullptr, "sgemm: C is null but m×n = " << m << "×" << n);
    BOOK_CHECK(ldc >= n, "sgemm: ldc=" << ldc << " is shorter than a row of C (n=" << n
                                       << "); ldc must be >= " << n);
    scale_c(m, n, beta, c, ldc);
    return;
  }
  const bool ta = trans_a == Transpose::kYes, tb = trans_b == Transpose::kYes;
  check_gemm_args("sgemm", m, n, k, a, lda, ta ? m : k, b, ldb, tb ? k : n, c, ldc);
  // C is written block by block while A and B are still being read: an element shared with
  // either gives a silently wrong product once k spans more than one block, so it is refused.
  // Matrices that only interleave (different columns of one padded buffer) share none.
  const Storage c_storage = storage_of(c, m, n, ldc);
  BOOK_CHECK(!overlap(c_storage, storage_of(a, ta ? k : m, ta ? m : k, lda)),
             "sgemm: C (m×n = " << m << "×" << n << ", ldc=" << ldc
                                << ") overlaps A in memory; write C into its own buffer");
  BOOK_CHECK(!overlap(c_storage, storage_of(b, tb ? n : k, tb ? k : n, ldb)),
             "sgemm: C (m×n = " << m << "×" << n << ", ldc=" << ldc
                                << ") overlaps B in memory; write C into its own buffer");
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
