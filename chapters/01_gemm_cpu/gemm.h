/// @file
/// Chapter 1's exercises: the rungs of the CPU GEMM ladder, each faster than the one before for
/// a reason the README explains. Rungs 1 to 6 are each a complete single-precision matrix
/// multiply; rungs 7 to 9 are each one piece of the chapter's engine (below).
///
/// Each of rungs 1 to 6 computes C = A·B in row-major storage: A is m×k with rows `lda` floats
/// apart, B is k×n with rows `ldb` apart, C is m×n with rows `ldc` apart. C is overwritten and
/// never read (it may hold NaN on entry), and elements of C's rows beyond column n are left alone.
/// The rungs (and the pieces) do not check their arguments: call them through book::gemm::matmul
/// (dispatch.h), which checks once. Requires m, n, k >= 1, lda >= k, ldb >= n, ldc >= n.
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

// Rungs 7 to 9 are chapter 1's engine (engine/engine.h: the five loops, packing, kernels, threads)
// with one piece of it written by you; the rest is the engine's own. Each piece below is what
// its rung adds; `book::gemm::matmul` runs the rung with the piece plugged in, and the graded
// tests test the piece on its own and the rung as a whole. sgemm always runs the engine's own
// pieces, so later chapters never depend on yours.

/// gemm.07, part 1: packs one micro-panel of A or B that may be partial, padding it with zeros.
///
/// A micro-panel is `kc` steps of k by `width` lanes (the rows of an MR-row panel of A, or the
/// columns of an NR-column panel of B), stored step by step: `dst[p * width + l]`. Lane l of step
/// p comes from `src[p * step_stride + l * lane_stride]` for l < `lanes`; lanes `lanes` to
/// `width - 1` are 0.0f, so the micro-kernel can multiply a full panel and the padding adds
/// nothing. Writes exactly `kc * width` floats and nothing else. A row-major A is read with
/// step_stride = 1 and lane_stride = lda, a row-major B with step_stride = ldb and lane_stride =
/// 1 (sgemm's transposes swap them). The engine packs full panels itself and calls this for the
/// last, partial panel of a block: 1 <= lanes < width, kc >= 1 (lanes == width must work too).
void pack_padded_panel(const float* src, long step_stride, long lane_stride, int lanes, int width,
                       int kc, float* dst);

/// gemm.07, part 2: writes the valid corner of a partial tile into C.
///
/// `tile` holds a whole MR×NR micro-tile (rows `tile_ld` floats apart), computed by the
/// micro-kernel from zero-padded panels; only its first `rows` × `cols` elements belong to C.
/// Sets `c[i * ldc + j] = alpha * tile[i * tile_ld + j] + beta * c[i * ldc + j]` for i < rows,
/// j < cols. When beta == 0, C is not read (it may hold NaN). Nothing else of C is written.
/// Requires rows, cols >= 1.
void write_partial_tile(const float* tile, int tile_ld, int rows, int cols, float alpha, float beta,
                        float* c, long ldc);

/// gemm.08: the AVX-512 micro-kernel: a 12×32 tile of C in 24 zmm registers.
///
/// C[0:12, 0:32] = alpha * (A panel)·(B panel) + beta * C over `kc` >= 1 steps: step p holds 12
/// floats of A at `a + 12 p` and 32 floats of B at `b + 32 p`, both 64-byte aligned (packed
/// panels). C's rows are `ldc` floats apart and C has no particular alignment; when beta == 0,
/// C is not read (it may hold NaN). Nothing outside the 12×32 tile is written. Define it with
/// `__attribute__((target("avx512f")))`: the engine calls it only where the CPU has AVX-512F
/// (elsewhere rung 8 runs the AVX2 kernel of rung 7, and its tests skip).
void kernel_12x32_avx512(int kc, const float* a, const float* b, float* c, long ldc, float alpha,
                         float beta);

/// The problem and the block sizes of one run of the five loops (the README's rung 6).
struct LoopSizes {
  int m;   ///< rows of A and C
  int n;   ///< columns of B and C
  int k;   ///< the inner dimension
  int mr;  ///< rows of the kernel's register tile (an A micro-panel)
  int nr;  ///< columns of the kernel's register tile (a B micro-panel)
  int mc;  ///< rows per block of A (a multiple of mr)
  int kc;  ///< depth per block
  int nc;  ///< columns per block of B (a multiple of nr)
};

/// gemm.09: the steps the engine takes for one thread, on request.
///
/// The blocks are those of the five loops: the block of A at (ic, pc) is rows [ic, ic + MC) ×
/// depth [pc, pc + KC) (clipped to m and k), its row micro-panels numbered from 0; one packed
/// block of A is shared by all threads; each thread packs its blocks of B into its own buffer.
class ThreadWork {
 public:
  /// The problem and block sizes.
  virtual LoopSizes sizes() const = 0;
  /// Packs row micro-panels [first, last) of the block of A at (ic, pc) into the shared buffer.
  /// ic is a multiple of MC below m, pc a multiple of KC below k, 0 <= first < last <= the
  /// block's panel count ⌈min(MC, m − ic) / MR⌉.
  virtual void pack_a(int ic, int pc, int first, int last) = 0;
  /// Packs B's rows [pc, pc + KC) (clipped to k) × columns [jc, jc + nc) into this thread's
  /// buffer; 0 <= jc, 1 <= nc <= NC, jc + nc <= n.
  virtual void pack_b(int pc, int jc, int nc) = 0;
  /// Loops 2 and 1: the shared packed block of A at (ic, pc) times this thread's packed block of
  /// B (the one last packed with these pc, jc, nc) into C's rows [ic, ic + MC) × columns
  /// [jc, jc + nc): C = alpha·A·B + beta·C for pc == 0, C += alpha·A·B after.
  virtual void multiply(int ic, int pc, int jc, int nc) = 0;
  /// A barrier: returns once every thread has called it as many times.
  virtual void wait_for_all() = 0;

 protected:
  ~ThreadWork() = default;
};

/// gemm.09: loops 5, 4 and 3 of the five loops as thread `thread` of `threads` runs them (the
/// engine calls it on each of its threads at once, 1 <= threads <= ⌈n / NR⌉).
///
/// Correct means: every thread calls `work.wait_for_all()` the same number of times; each block
/// of A is packed whole, every panel exactly once, by the threads together between two barriers,
/// with no thread multiplying while any packs; every block (ic, pc) is multiplied, after it is
/// packed and before the shared buffer is packed again, into every column of C exactly once, in
/// increasing pc for each element; each multiply uses the thread's own block of B just packed.
/// Fast means the split of the README's rung 9: each thread's columns are whole NR-wide
/// micro-panels (only the last one of C may be partial), the threads' counts differ by at most
/// one, and they share the packing of each block of A.
void five_loops_thread(int thread, int threads, ThreadWork& work);

}  // namespace book::gemm
