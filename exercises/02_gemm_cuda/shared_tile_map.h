// Exercise cuda_gemm.shared_tile, part 1 of 2: which elements thread (tx, ty) handles. Compiled
// into your kernel (shared_tile.cu) and into the host schedule the CPU tests check
// (chapters/02_gemm_cuda/exercise_schedules.cc, which you do not edit). Coordinates are relative to
// the block's tiles: add (block row · 32, k0) for A, (k0, block column · 32) for B, (block row ·
// 32, block column · 32) for C. Read chapters/02_gemm_cuda/README.md, "Rung 3", then replace each
// BOOK_MAP_STUB.
#pragma once

#include "chapters/02_gemm_cuda/index.h"
#include "exercises/02_gemm_cuda/stub.h"

namespace book::gemm_cuda {

// The A element thread (tx, ty) copies into the 32 × 32 shared A tile. Make a warp (one ty,
// tx = 0..31) read 32 consecutive floats of one row of A.
BOOK_HD Coord shared_tile_a(int tx, int ty) {
  (void)tx, (void)ty;
  BOOK_MAP_STUB("cuda_gemm.shared_tile", "exercises/02_gemm_cuda/shared_tile_map.h");
}

// The B element thread (tx, ty) copies into the 32 × 32 shared B tile: a row of B per warp too.
BOOK_HD Coord shared_tile_b(int tx, int ty) {
  (void)tx, (void)ty;
  BOOK_MAP_STUB("cuda_gemm.shared_tile", "exercises/02_gemm_cuda/shared_tile_map.h");
}

// The C element thread (tx, ty) computes (and writes): coalesced, as in rung 2.
BOOK_HD Coord shared_tile_output(int tx, int ty) {
  (void)tx, (void)ty;
  BOOK_MAP_STUB("cuda_gemm.shared_tile", "exercises/02_gemm_cuda/shared_tile_map.h");
}

}  // namespace book::gemm_cuda
