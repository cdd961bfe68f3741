// Exercise cuda_gemm.wmma, part 1 of 2: which elements thread `t` (0–255, warp t / 32) handles in
// the 128 × 128 × 32 BF16 block tile (TensorTile). Compiled into the kernel (wmma.cu) and into the
// host schedule the CPU tests check (chapters/02_gemm_cuda/exercise_schedules.cc). Coordinates are
// tile-relative.
#pragma once

#include "chapters/02_gemm_cuda/index.h"
#include "chapters/02_gemm_cuda/tiles.h"

namespace book::gemm_cuda {

// 16-byte chunks (8 BF16) per thread per step: the 128 × 32 A tile has 512 of them, and so has
// the 32 × 128 B tile.
inline constexpr int kWmmaLoads =
    chunks_per_thread(TensorTile::kBM, TensorTile::kBK, TensorTile::kChunk, TensorTile::kThreads);

// The i-th 8-element chunk of A thread t copies: 4 threads per 32-element row of the tile.
BOOK_HD constexpr Coord wmma_a_chunk(int t, int i) {
  return cooperative_chunk(t, TensorTile::kThreads, i, TensorTile::kBK, TensorTile::kChunk);
}

// The i-th 8-element chunk of B thread t copies: 16 threads per 128-element row.
BOOK_HD constexpr Coord wmma_b_chunk(int t, int i) {
  return cooperative_chunk(t, TensorTile::kThreads, i, TensorTile::kBN, TensorTile::kChunk);
}

// The top-left of fragment (fm, fn) — 16 × 16 — of warp `warp`: warps form a 2 × 4 grid of
// 64 × 32 sub-tiles, each holding 4 × 2 fragments.
BOOK_HD constexpr Coord wmma_fragment(int warp, int fm, int fn) {
  return {(warp / TensorTile::kWarpsN) * TensorTile::kWM + fm * 16,
          (warp % TensorTile::kWarpsN) * TensorTile::kWN + fn * 16};
}

// After store_matrix_sync writes a fragment to the warp's 16 × 16 staging area, lane `lane`
// copies its i-th element (i = 0..7) to C: a warp writes two rows of 16 per instruction.
BOOK_HD constexpr Coord wmma_staged(int lane, int i) {
  return {(lane + 32 * i) / 16, (lane + 32 * i) % 16};
}

}  // namespace book::gemm_cuda
