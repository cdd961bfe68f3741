/// @file
/// A BLAS-like single-precision GEMM for the rest of the book (chapter 4 trains with it).
///
/// It is not an exercise: it always runs the chapter's engine with its own pieces (the fastest
/// rungs of chapter 1's ladder as the reference builds them), so later chapters work whether or
/// not the reader has finished chapter 1.
#pragma once

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
/// must not share memory with A or B. Throws book::Error for negative sizes, a Transpose other
/// than kNo or kYes, and any of those.
///
/// Transposes cost nothing extra: the packing step copies panels of A and B into the kernel's
/// order anyway, and reading a transposed operand only changes the strides it reads with.
void sgemm(Transpose trans_a, Transpose trans_b, int m, int n, int k, float alpha, const float* a,
           int lda, const float* b, int ldb, float beta, float* c, int ldc);

/// How many threads sgemm may use: 0 (the default) means all hardware threads; 1 keeps it on the
/// calling thread (what a caller that already runs one thread per core, like chapter 5's ranks,
/// wants). Throws book::Error if negative.
void set_sgemm_threads(int threads);

/// The thread count set by set_sgemm_threads (0 = all hardware threads).
int sgemm_threads();

/// GFLOP/s of sgemm's micro-kernel alone on one thread, called over and over on the same packed
/// panels (128 steps of k), which stay in L1: the kernel's own ceiling, between the machine's FMA
/// peak and what the whole GEMM reaches once data must come from L2, L3 and memory.
double measure_microkernel_gflops();

}  // namespace book::gemm
