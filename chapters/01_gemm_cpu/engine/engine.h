/// @file
/// Chapter 1's GEMM engine: packing, the micro-kernels and the five loops with padded edges,
/// alpha and beta, strided (possibly transposed) operands and a thread count.
///
/// It is chapter code, not an exercise: book::gemm::sgemm (and so chapter 4) runs it whatever
/// track is built, the tune stage runs it with other block sizes, and the reference rungs 5–9
/// are built from its pieces. Operands are read through general strides, so a transposed
/// operand is just other strides: packing copies it into the kernel's order either way, which
/// is why sgemm's transposes are free.
#pragma once

#include <cstddef>

namespace book::gemm::engine {

/// A matrix read through strides: element (i, j) is data[i * row_stride + j * col_stride].
struct Strided {
  const float* data;  ///< element (0, 0)
  long row_stride;    ///< floats from one row to the next
  long col_stride;    ///< floats from one column to the next
  /// Element (i, j).
  float at(long i, long j) const { return data[i * row_stride + j * col_stride]; }
};

/// C = alpha * A·B + beta * C (beta == 0: C is not read); A is m×k, B is k×n, C row-major.
struct Problem {
  int m;        ///< rows of A and C
  int n;        ///< columns of B and C
  int k;        ///< columns of A, rows of B
  float alpha;  ///< scales A·B
  Strided a;    ///< A, m×k
  Strided b;    ///< B, k×n
  float beta;   ///< scales C on entry (0: C is not read)
  float* c;     ///< C, m×n, rows ldc floats apart
  long ldc;     ///< floats from one row of C to the next
};

/// A micro-kernel: C[0:MR, 0:NR] = alpha * (packed A panel)·(packed B panel) + beta * C over `kc`
/// steps; the A panel holds MR floats per step, the B panel NR floats per step (both 64-byte
/// aligned); C's rows are `ldc` floats apart; when beta == 0, C is not read.
using KernelFn = void (*)(int kc, const float* a, const float* b, float* c, long ldc, float alpha,
                          float beta);

/// A micro-kernel with the block sizes tuned for it.
struct KernelSpec {
  int mr;       ///< rows of the register tile of C
  int nr;       ///< columns of the register tile of C
  int mc;       ///< rows per block of A (a multiple of mr): the A block lives in L3
  int kc;       ///< depth per block: the mr × kc A micro-panel lives in L1
  int nc;       ///< columns per block of B (a multiple of nr): the kc × nc B block lives in L2
  KernelFn fn;  ///< the kernel
};

/// The AVX2 6×16 kernel (rungs 4–7) with its block sizes.
extern const KernelSpec kAvx2Kernel;
/// The AVX-512 12×32 kernel (rungs 8–9) with its block sizes; run it only where the CPU has
/// AVX-512F (best_kernel() checks).
extern const KernelSpec kAvx512Kernel;

/// The AVX-512 kernel where the CPU has AVX-512F, else the AVX2 one.
const KernelSpec& best_kernel();

/// Copies rows [i0, i0+mc) × columns [p0, p0+kc) of A into MR-row micro-panels, step-major
/// (dst[panel][p][i]), padding the last panel's missing rows with zeros.
void pack_a(const Strided& a, int i0, int p0, int mc, int kc, int mr, float* dst);

/// Copies rows [p0, p0+kc) × columns [j0, j0+nc) of B into NR-column micro-panels, step-major
/// (dst[panel][p][j]), padding the last panel's missing columns with zeros.
void pack_b(const Strided& b, int p0, int j0, int kc, int nc, int nr, float* dst);

/// The five loops with padded edges, on `threads` threads (1 = this one): C = alpha·A·B + beta·C.
void five_loops(const Problem& problem, const KernelSpec& kernel, int threads);

/// The Problem C = A·B for the rungs' plain row-major signature.
inline Problem plain(int m, int n, int k, const float* a, int lda, const float* b, int ldb,
                     float* c, int ldc) {
  return {m, n, k, 1.0f, {a, lda, 1}, {b, ldb, 1}, 0.0f, c, ldc};
}

}  // namespace book::gemm::engine
