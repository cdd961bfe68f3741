// Exercise cuda_gemm.register_2d, part 1 of 2: which elements thread `t` (0–255) handles in the 128
// × 128 × 8 block tile. Compiled into the kernel (register_2d.cu) and into the host schedule the
// CPU tests check (chapters/02_gemm_cuda/exercise_schedules.cc). Coordinates are tile-relative
// (chapters/02_gemm_cuda/tiles.h).
#pragma once

#include "chapters/02_gemm_cuda/index.h"
#include "chapters/02_gemm_cuda/tiles.h"

namespace book::gemm_cuda {

// Loads per thread per step: the 128 × 8 A tile and the 8 × 128 B tile have 1024 elements each.
inline constexpr int kRegister2dLoads =
    chunks_per_thread(BlockTile2d::kBM, BlockTile2d::kBK, 1, BlockTile2d::kThreads);  // 4

// The i-th A element thread t copies: consecutive threads take consecutive elements of a row.
BOOK_HD constexpr Coord register_2d_a(int t, int i) {
  return cooperative_chunk(t, BlockTile2d::kThreads, i, BlockTile2d::kBK, 1);
}

// The i-th B element thread t copies.
BOOK_HD constexpr Coord register_2d_b(int t, int i) {
  return cooperative_chunk(t, BlockTile2d::kThreads, i, BlockTile2d::kBN, 1);
}

// The top-left corner of thread t's 8 × 8 square of C: 16 threads across, 16 down.
BOOK_HD constexpr Coord register_2d_output(int t) {
  constexpr int kAcross = BlockTile2d::kBN / BlockTile2d::kTN;
  return {(t / kAcross) * BlockTile2d::kTM, (t % kAcross) * BlockTile2d::kTN};
}

}  // namespace book::gemm_cuda
