// Exercise cuda_gemm.wmma, part 1 of 2: which elements thread `t` (0–255, warp t / 32) handles in
// the 128 × 128 × 32 BF16 block tile (TensorTile in chapters/02_gemm_cuda/tiles.h). Compiled into
// your kernel (wmma.cu) and into the host schedule the CPU tests check
// (chapters/02_gemm_cuda/exercise_schedules.cc, which you do not edit). Coordinates are
// tile-relative. Read the README, "Rung 8", then replace the stubs.
#pragma once

#include "chapters/02_gemm_cuda/index.h"
#include "chapters/02_gemm_cuda/tiles.h"
#include "exercises/02_gemm_cuda/stub.h"

namespace book::gemm_cuda {

// 16-byte chunks (8 BF16) per thread per step: 512 chunks per tile, 256 threads.
inline constexpr int kWmmaLoads =
    chunks_per_thread(TensorTile::kBM, TensorTile::kBK, TensorTile::kChunk, TensorTile::kThreads);

// The i-th 8-element chunk of the 128 × 32 A tile thread t copies.
BOOK_HD Coord wmma_a_chunk(int t, int i) {
  (void)t, (void)i;
  BOOK_MAP_STUB("cuda_gemm.wmma", "exercises/02_gemm_cuda/wmma_map.h");
}

// The i-th 8-element chunk of the 32 × 128 B tile thread t copies.
BOOK_HD Coord wmma_b_chunk(int t, int i) {
  (void)t, (void)i;
  BOOK_MAP_STUB("cuda_gemm.wmma", "exercises/02_gemm_cuda/wmma_map.h");
}

// The top-left of 16 × 16 fragment (fm, fn), fm < 4, fn < 2, of warp `warp`: the warps form a
// 2 × 4 grid of 64 × 32 sub-tiles.
BOOK_HD Coord wmma_fragment(int warp, int fm, int fn) {
  (void)warp, (void)fm, (void)fn;
  BOOK_MAP_STUB("cuda_gemm.wmma", "exercises/02_gemm_cuda/wmma_map.h");
}

// The i-th element (i < 8) of a staged 16 × 16 fragment that lane `lane` copies out to C.
BOOK_HD Coord wmma_staged(int lane, int i) {
  (void)lane, (void)i;
  BOOK_MAP_STUB("cuda_gemm.wmma", "exercises/02_gemm_cuda/wmma_map.h");
}

}  // namespace book::gemm_cuda
