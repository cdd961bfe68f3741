/// @file
/// Chapter 1's exercises: the rungs of the CPU GEMM ladder, each a complete single-precision
/// matrix multiply, each faster than the one before for a reason the README explains.
///
/// Every rung computes C = A·B in row-major storage: A is m×k with rows `lda` floats apart, B is
/// k×n with rows `ldb` apart, C is m×n with rows `ldc` apart. C is overwritten and never read (it
/// may hold NaN on entry), and elements of C's rows beyond column n are left alone. The rungs do
/// not check their arguments: call them through book::gemm::matmul (dispatch.h), which checks once.
/// Requires m, n, k >= 1, lda >= k, ldb >= n, ldc >= n.
#pragma once

namespace book::gemm {

/// gemm.01: the textbook i-j-k triple loop, one dot product per element of C.
void matmul_naive(int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c,
                  int ldc);

/// gemm.02: the same loops in i-k-j order, so the inner loop walks B and C with unit stride.
void matmul_reorder(int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c,
                    int ldc);

/// gemm.03: i-k-j on tiles sized for the caches, so a tile of B is reused while it is still in
/// L1/L2.
void matmul_blocked(int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c,
                    int ldc);

/// gemm.04: a 6×16 register-blocked micro-kernel with AVX2 FMA intrinsics, over blocks of 256 steps
/// of k, reading A and B in place.
void matmul_microkernel(int m, int n, int k, const float* a, int lda, const float* b, int ldb,
                        float* c, int ldc);

/// gemm.05: the micro-kernel on packed operands: A copied into 6-row panels and B into 16-column
/// panels, so the kernel streams contiguous memory.
void matmul_packed(int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c,
                   int ldc);

/// gemm.06: the BLIS/GotoBLAS five loops: blocks of MC rows, KC depth and NC columns chosen so a
/// micro-panel of A stays in L1, a block of B in L2 and a block of A in L3; fringe tiles in scalar
/// code.
void matmul_five_loops(int m, int n, int k, const float* a, int lda, const float* b, int ldb,
                       float* c, int ldc);

/// gemm.07: edge handling at speed: zero-padded panels and a tile buffer, so every tile (full or
/// not) runs the micro-kernel.
void matmul_edges(int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c,
                  int ldc);

/// gemm.08: an AVX-512 12×32 micro-kernel chosen at run time where the CPU has AVX-512F (as
/// OpenBLAS and BLIS do); elsewhere the same as gemm.07. Single-threaded.
void matmul_avx512(int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c,
                   int ldc);

/// gemm.09: gemm.08 on all hardware threads: the threads share each packed block of A and split the
/// columns of C between them, each packing its own blocks of B.
void matmul_threads(int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c,
                    int ldc);

}  // namespace book::gemm
