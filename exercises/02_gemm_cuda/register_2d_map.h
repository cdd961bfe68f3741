// Exercise cuda_gemm.register_2d, part 1 of 2: which elements thread `t` (0–255) handles in the 128
// × 128 × 8 block tile (BlockTile2d in chapters/02_gemm_cuda/tiles.h). Compiled into your kernel
// (register_2d.cu) and into the host schedule the CPU tests check
// (chapters/02_gemm_cuda/exercise_schedules.cc, which you do not edit). Coordinates are
// tile-relative. Read the README, "Rung 5", then replace the stubs.
#pragma once

#include "chapters/02_gemm_cuda/index.h"
#include "chapters/02_gemm_cuda/tiles.h"
#include "exercises/02_gemm_cuda/stub.h"

namespace book::gemm_cuda {

// Loads per thread per step: the 128 × 8 A tile and the 8 × 128 B tile have 1024 elements each.
inline constexpr int kRegister2dLoads =
    chunks_per_thread(BlockTile2d::kBM, BlockTile2d::kBK, 1, BlockTile2d::kThreads);  // 4

// The i-th A element (i < kRegister2dLoads) thread t copies. Hint: cooperative_chunk().
BOOK_HD Coord register_2d_a(int t, int i) {
  (void)t, (void)i;
  BOOK_MAP_STUB("cuda_gemm.register_2d", "exercises/02_gemm_cuda/register_2d_map.h");
}

// The i-th B element thread t copies.
BOOK_HD Coord register_2d_b(int t, int i) {
  (void)t, (void)i;
  BOOK_MAP_STUB("cuda_gemm.register_2d", "exercises/02_gemm_cuda/register_2d_map.h");
}

// The top-left corner of thread t's 8 × 8 square of results.
BOOK_HD Coord register_2d_output(int t) {
  (void)t;
  BOOK_MAP_STUB("cuda_gemm.register_2d", "exercises/02_gemm_cuda/register_2d_map.h");
}

}  // namespace book::gemm_cuda
