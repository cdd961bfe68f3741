/// @file
/// The index arithmetic every rung shares, compiled both by nvcc (inside the kernels) and by g++
/// (inside the host-side schedules that the CPU tests check). One copy, so a schedule that passes
/// on the CPU is the schedule the kernel runs.
#pragma once

#if defined(__CUDACC__)
/// Marks a function usable from both host and device code (plain `inline` under g++).
#define BOOK_HD __host__ __device__ __forceinline__
#else
/// Marks a function usable from both host and device code (plain `inline` under g++).
#define BOOK_HD inline
#endif

namespace book::gemm_cuda {

/// A (row, column) position in a row-major matrix.
struct Coord {
  int row = 0;  ///< Row index.
  int col = 0;  ///< Column index.
};

/// ⌈a / b⌉ for positive integers: the number of tiles of size `b` that cover `a` elements.
BOOK_HD constexpr int ceil_div(int a, int b) { return (a + b - 1) / b; }

/// Cooperative tile loading: the threads of a block copy a `rows` × `cols` tile in chunks of
/// `width` consecutive elements of a row; chunk number `thread + i * threads` is the `i`-th chunk
/// of `thread`. Consecutive threads take consecutive chunks of a row, so a warp's accesses are
/// coalesced. Returns the chunk's first element, relative to the tile.
BOOK_HD constexpr Coord cooperative_chunk(int thread, int threads, int i, int cols, int width) {
  const int chunk = thread + i * threads;
  const int chunks_per_row = cols / width;
  return {chunk / chunks_per_row, (chunk % chunks_per_row) * width};
}

/// How many chunks each thread copies so that `threads` threads cover a `rows` × `cols` tile.
/// The kernels static_assert that the division is exact.
BOOK_HD constexpr int chunks_per_thread(int rows, int cols, int width, int threads) {
  return rows * cols / width / threads;
}

/// How one chunk of `width` elements starting at (row, col) of a `rows` × `cols` matrix is read.
enum class ChunkKind {
  kVector,  ///< all of it lies inside and the row is aligned: one wide (8- or 16-byte) access
  kZero,    ///< all of it lies outside: nothing is read, zeros go to shared memory
  kScalar,  ///< otherwise: `width` element accesses, each masked by its own bounds check
};

/// Decides how a chunk is read; `aligned` says whether every row of the matrix starts on a
/// `width`-element boundary (true when the leading dimension is a multiple of `width`).
BOOK_HD constexpr ChunkKind chunk_kind(int row, int col, int rows, int cols, int width,
                                       bool aligned) {
  if (row >= rows || col >= cols) return ChunkKind::kZero;
  if (aligned && col + width <= cols) return ChunkKind::kVector;
  return ChunkKind::kScalar;
}

/// True when (row, col) lies inside a `rows` × `cols` matrix.
BOOK_HD constexpr bool inside(int row, int col, int rows, int cols) {
  return row < rows && col < cols;
}

}  // namespace book::gemm_cuda
