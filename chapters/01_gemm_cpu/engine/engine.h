/// @file
/// Chapter 1's GEMM engine: packing, the micro-kernels and the five loops with padded edges,
/// alpha and beta, strided (possibly transposed) operands and a thread count.
///
/// It is chapter code, not an exercise: book::gemm::sgemm (and so chapter 4) runs it whatever
/// track is built, with its own pieces; rungs 7 to 9 run it with one piece from the track
/// (gemm.h: the edges, the AVX-512 kernel, the per-thread loops); the tune stage runs it with
/// other block sizes; the reference rungs 5 and 6 use its packing and kernel. The engine's own
/// pieces are the answers to gemm.07 to gemm.09 (edges.cc, kernels.cc, thread_loop.cc): they live
/// here, not in solutions/, because sgemm needs them whichever track is built. Operands are read
/// through general strides, so a transposed operand is just other strides: packing copies it into
/// the kernel's order either way, which is why sgemm's transposes are free.
#pragma once

#include <cstddef>
#include <functional>

#include "chapters/01_gemm_cpu/gemm.h"

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
/// AVX-512F (has_avx512()).
extern const KernelSpec kAvx512Kernel;

/// Whether this CPU has AVX-512F.
bool has_avx512();

/// The AVX-512 kernel where the CPU has AVX-512F, else the AVX2 one.
const KernelSpec& best_kernel();

/// The engine's own gemm.08: the contract of book::gemm::kernel_12x32_avx512.
void kernel_12x32_avx512(int kc, const float* a, const float* b, float* c, long ldc, float alpha,
                         float beta);

/// The engine's own gemm.07, part 1: the contract of book::gemm::pack_padded_panel.
void pack_padded_panel(const float* src, long step_stride, long lane_stride, int lanes, int width,
                       int kc, float* dst);

/// The engine's own gemm.07, part 2: the contract of book::gemm::write_partial_tile.
void write_partial_tile(const float* tile, int tile_ld, int rows, int cols, float alpha, float beta,
                        float* c, long ldc);

/// The engine's own gemm.09: the contract of book::gemm::five_loops_thread.
void five_loops_thread(int thread, int threads, ThreadWork& work);

/// A packer of one partial micro-panel (gemm.07, part 1).
using PanelPacker = decltype(&book::gemm::pack_padded_panel);

/// The pieces of the engine that rungs 7 and 9 take from the track; the kernel (gemm.08) is in
/// KernelSpec.
struct Pieces {
  PanelPacker pack_padded_panel;                                 ///< gemm.07, part 1
  decltype(&book::gemm::write_partial_tile) write_partial_tile;  ///< gemm.07, part 2
  decltype(&book::gemm::five_loops_thread) five_loops_thread;    ///< gemm.09
};

/// The engine's own pieces (what sgemm runs).
extern const Pieces kOwnPieces;

/// Copies rows [i0, i0+mc) × columns [p0, p0+kc) of A into MR-row micro-panels, step-major
/// (dst[panel][p][i]); the last panel, if partial, goes through `partial`, which pads it with
/// zeros.
void pack_a(const Strided& a, int i0, int p0, int mc, int kc, int mr, float* dst,
            PanelPacker partial = engine::pack_padded_panel);

/// Copies rows [p0, p0+kc) × columns [j0, j0+nc) of B into NR-column micro-panels, step-major
/// (dst[panel][p][j]); the last panel, if partial, goes through `partial`, which pads it with
/// zeros.
void pack_b(const Strided& b, int p0, int j0, int kc, int nc, int nr, float* dst,
            PanelPacker partial = engine::pack_padded_panel);

/// The five loops with padded edges, on `threads` threads (1 = this one): C = alpha·A·B + beta·C.
/// Where `pieces.five_loops_thread` is not the engine's own, it is first run once per thread
/// without doing any work (check_thread_loop()), so a loop that would leave the threads waiting
/// for each other, or ask for a block outside the matrices, is refused with a book::Error instead
/// of hanging or writing out of bounds.
void five_loops(const Problem& problem, const KernelSpec& kernel, int threads,
                const Pieces& pieces = kOwnPieces);

/// Runs `loop` for every thread of `threads` in turn against a ThreadWork that only checks the
/// arguments of each step and counts the barriers. Throws book::Error, naming the thread and the
/// step, if a step's blocks lie outside the problem or the threads call wait_for_all() different
/// numbers of times (which would leave them waiting forever). Exceptions from `loop` itself (a
/// stub's NotImplemented) pass through.
void check_thread_loop(decltype(&book::gemm::five_loops_thread) loop, const LoopSizes& sizes,
                       int threads);

/// Runs job(0), …, job(threads − 1) at once: job(0) on the calling thread, the others on its team
/// (team.h: the workers five_loops() runs on, kept between calls). Returns when all have returned
/// and rethrows the first exception a job threw. One level only: called from inside a job, it runs
/// the jobs one after another on that thread, and five_loops() runs on one thread. Jobs must not
/// wait for each other. What book::gemm::run_on_gemm_threads (sgemm.h) runs.
void run_jobs(int threads, const std::function<void(int)>& job);

/// Whether the calling thread is running a job of run_jobs().
bool in_parallel_job();

/// The Problem C = A·B for the rungs' plain row-major signature.
inline Problem plain(int m, int n, int k, const float* a, int lda, const float* b, int ldb,
                     float* c, int ldc) {
  return {m, n, k, 1.0f, {a, lda, 1}, {b, ldb, 1}, 0.0f, c, ldc};
}

}  // namespace book::gemm::engine
