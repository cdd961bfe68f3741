// Internal to the reference solutions: the pieces the packed rungs (05-09) and sgemm share.
// Operands are read through general strides, so a transposed operand is just other strides:
// packing copies it into the kernel's order either way, which is why sgemm's transposes are free.
#pragma once

#include <cstddef>

namespace book::gemm::detail {

/// A matrix read through strides: element (i, j) is data[i * row_stride + j * col_stride].
struct Strided {
  const float* data;
  long row_stride;
  long col_stride;
  float at(long i, long j) const { return data[i * row_stride + j * col_stride]; }
};

/// C = alpha * A·B + beta * C (beta == 0: C is not read); A is m×k, B is k×n, C row-major.
struct Problem {
  int m, n, k;
  float alpha;
  Strided a, b;
  float beta;
  float* c;
  long ldc;
};

/// A micro-kernel: C[0:MR, 0:NR] = alpha * (packed A panel)·(packed B panel) + beta * C over `kc`
/// steps; the A panel holds MR floats per step, the B panel NR floats per step.
using KernelFn = void (*)(int kc, const float* a, const float* b, float* c, long ldc, float alpha,
                          float beta);

/// A micro-kernel with the block sizes tuned for it.
struct KernelSpec {
  int mr, nr;  // register tile
  int mc, kc, nc;  // cache blocks: A micro-panel mr×kc in L1, B block kc×nc in L2, A block mc×kc
                   // in L3
  KernelFn fn;
};

/// The AVX2 6×16 kernel (gemm.04-07) and the AVX-512 12×32 one (gemm.08-09).
extern const KernelSpec kAvx2Kernel;
extern const KernelSpec kAvx512Kernel;

/// The AVX-512 kernel where the CPU has AVX-512F, else the AVX2 one.
const KernelSpec& best_kernel();

/// Copies rows [i0, i0+mc) × columns [p0, p0+kc) of A into MR-row micro-panels, step-major
/// (dst[panel][p][i]), padding the last panel's missing rows with zeros.
void pack_a(const Strided& a, int i0, int p0, int mc, int kc, int mr, float* dst);

/// Copies rows [p0, p0+kc) × columns [j0, j0+nc) of B into NR-column micro-panels, step-major
/// (dst[panel][p][j]), padding the last panel's missing columns with zeros.
void pack_b(const Strided& b, int p0, int j0, int kc, int nc, int nr, float* dst);

/// The gemm.07 engine: the five loops with padded edges, on `threads` threads (1 = this one).
void five_loops(const Problem& problem, const KernelSpec& kernel, int threads);

/// C = A·B problem for the rungs' plain row-major signature.
inline Problem plain(int m, int n, int k, const float* a, int lda, const float* b, int ldb,
                     float* c, int ldc) {
  return {m, n, k, 1.0f, {a, lda, 1}, {b, ldb, 1}, 0.0f, c, ldc};
}

}  // namespace book::gemm::detail
