// Exercise cuda_gemm.shared_tile, part 1 of 2: which elements thread (tx, ty) handles. Compiled
// into the kernel (shared_tile.cu) and into the host schedule the CPU tests check
// (chapters/02_gemm_cuda/exercise_schedules.cc). Coordinates are relative to the block's tiles (see
// chapters/02_gemm_cuda/tiles.h).
#pragma once

#include "chapters/02_gemm_cuda/index.h"

namespace book::gemm_cuda {

// The A element thread (tx, ty) copies to as[ty][tx]: row ty of the 32 × 32 A tile, column tx,
// so that a warp (one ty, tx = 0..31) reads 32 consecutive floats of one row of A.
BOOK_HD constexpr Coord shared_tile_a(int tx, int ty) { return {ty, tx}; }

// The B element thread (tx, ty) copies to bs[ty][tx]: likewise, a row of B per warp.
BOOK_HD constexpr Coord shared_tile_b(int tx, int ty) { return {ty, tx}; }

// The C element thread (tx, ty) computes: tx along the row, as in rung 2.
BOOK_HD constexpr Coord shared_tile_output(int tx, int ty) { return {ty, tx}; }

}  // namespace book::gemm_cuda
