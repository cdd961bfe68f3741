/// @file
/// A BLAS-like single-precision GEMM for the rest of the book (chapter 4 trains with it).
///
/// It is not an exercise: it always runs the chapter's engine with its own pieces (the fastest
/// rungs of chapter 1's ladder as the reference builds them), so later chapters work whether or
/// not the reader has finished chapter 1.
#pragma once

#include <functional>

namespace book::gemm {

/// Whether an operand is used as stored or transposed, as in BLAS.
enum class Transpose {
  kNo,   ///< use the matrix as stored
  kYes,  ///< use its transpose
};

/// Row-major C = alpha * op(A) * op(B) + beta * C, where op(A) is m×k and op(B) is k×n.
///
/// BLAS semantics: `a` holds A as stored (m×k rows of length lda if trans_a is kNo, k×m if kYes),
/// likewise `b`; `c` is m×n with rows lda/ldb/ldc elements apart. When beta == 0, C is not read
/// (it may hold NaN). As in reference BLAS, m or n = 0 returns at once, and k = 0 or alpha = 0
/// sets C = beta * C without reading A or B (NaN or Inf there does not reach C). Otherwise the
/// pointers must be non-null, each leading dimension at least the length of a stored row, and C
/// must not share an element with A or B (interleaving in one padded buffer is fine). Throws
/// book::Error for negative sizes, a Transpose other than kNo or kYes, and any of those.
///
/// Transposes cost nothing extra: the packing step copies panels of A and B into the kernel's
/// order anyway, and reading a transposed operand only changes the strides it reads with.
void sgemm(Transpose trans_a, Transpose trans_b, int m, int n, int k, float alpha, const float* a,
           int lda, const float* b, int ldb, float beta, float* c, int ldc);

/// How many threads sgemm may use while it lives: 0 means all hardware threads; 1 keeps sgemm on
/// the calling thread (what a caller that already runs one thread per core, like chapter 5's
/// ranks, wants). The count is a property of the process, because the worker threads are shared:
/// ranks started as threads inside the scope see it too. The destructor puts back the count the
/// constructor found, so scopes nest and a caller's setting survives a callee's. Scopes must end
/// in the reverse order they began (as block-scoped variables do); the default, with none alive,
/// is 0. Throws book::Error if `threads` is negative.
///
///     {
///       book::gemm::SgemmThreads one_each(1);  // the ranks are the parallelism
///       run_ranks(...);
///     }                                        // sgemm's count is back to what it was
class SgemmThreads {
 public:
  /// Sets the count to `threads` (>= 0) until the destructor runs.
  explicit SgemmThreads(int threads);
  /// Puts back the count in force before the constructor.
  ~SgemmThreads();
  SgemmThreads(const SgemmThreads&) = delete;             ///< One scope, one restore.
  SgemmThreads& operator=(const SgemmThreads&) = delete;  ///< One scope, one restore.

 private:
  int previous_;
};

/// The thread count of the innermost live SgemmThreads (0 = all hardware threads; 0 with none).
int sgemm_threads();

/// The threads sgemm splits a large enough product over: sgemm_threads(), or the hardware
/// threads when that is 0. Later chapters read it as the one thread knob of their own loops too
/// (chapter 4's training step splits its layers over this many threads).
int sgemm_thread_count();

/// Runs job(0), …, job(threads − 1) at the same time and returns when all have returned: job(0)
/// on the calling thread, the others on the worker threads sgemm keeps for the calling thread
/// (rung 9's team: started once, kept between calls, waiting at a spinning barrier), so that a
/// caller's own loops and its GEMMs share one set of threads instead of two sets taking turns on
/// the same cores. The first exception a job throws is rethrown once all have returned. One level
/// of threads only: inside a job, sgemm runs on that job's thread alone, and a nested call runs
/// its jobs one after another. Jobs must not wait for each other. `threads` <= 1 runs job(0) here.
void run_on_gemm_threads(int threads, const std::function<void(int thread)>& job);

/// GFLOP/s of sgemm's micro-kernel alone on one thread, called over and over on the same packed
/// panels (128 steps of k), which stay in L1: the kernel's own ceiling, between the machine's FMA
/// peak and what the whole GEMM reaches once data must come from L2, L3 and memory.
double measure_microkernel_gflops();

}  // namespace book::gemm
