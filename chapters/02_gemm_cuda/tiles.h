/// @file
/// Tile sizes of every rung, and the thread-to-element maps of the rungs that are not exercises.
/// Kernels (nvcc) and schedules (g++) both include this file.
///
/// Coordinates returned by the maps are relative to the block's tile: add the tile's origin
/// (block_y · BM, block_x · BN) for C, (block_y · BM, k0) for A, (k0, block_x · BN) for B.
#pragma once

#include "chapters/02_gemm_cuda/index.h"

namespace book::gemm_cuda {

/// Rungs 1–3: a 32 × 32 block of threads, one output element per thread.
struct SquareTiles {
  static constexpr int kSide = 32;  ///< Threads per block side, and the shared tile's side.
};

/// Rung 4: each thread computes a column of TM results.
struct BlockTile1d {
  static constexpr int kBM = 64;                    ///< Rows of C per block.
  static constexpr int kBN = 64;                    ///< Columns of C per block.
  static constexpr int kBK = 8;                     ///< K per step.
  static constexpr int kTM = 8;                     ///< Results per thread (a column).
  static constexpr int kThreads = kBM * kBN / kTM;  ///< 512.
};

/// Rungs 5 and 6: each thread computes a TM × TN square of results.
struct BlockTile2d {
  static constexpr int kBM = 128;                           ///< Rows of C per block.
  static constexpr int kBN = 128;                           ///< Columns of C per block.
  static constexpr int kBK = 8;                             ///< K per step.
  static constexpr int kTM = 8;                             ///< Rows of results per thread.
  static constexpr int kTN = 8;                             ///< Columns of results per thread.
  static constexpr int kThreads = kBM * kBN / (kTM * kTN);  ///< 256.
};

/// Rung 7: warps own compact 64 × 32 sub-tiles; each lane computes 2 × 2 squares of 4 × 4.
struct WarpTile {
  static constexpr int kBM = 128;                          ///< Rows of C per block.
  static constexpr int kBN = 128;                          ///< Columns of C per block.
  static constexpr int kBK = 16;                           ///< K per step.
  static constexpr int kWarpsM = 2;                        ///< Warps down the block tile.
  static constexpr int kWarpsN = 4;                        ///< Warps across the block tile.
  static constexpr int kWM = kBM / kWarpsM;                ///< 64 rows per warp.
  static constexpr int kWN = kBN / kWarpsN;                ///< 32 columns per warp.
  static constexpr int kIterM = 2;                         ///< Sub-tiles per warp, down.
  static constexpr int kIterN = 2;                         ///< Sub-tiles per warp, across.
  static constexpr int kLanesM = 8;                        ///< Lanes down a sub-tile.
  static constexpr int kLanesN = 4;                        ///< Lanes across a sub-tile.
  static constexpr int kTM = kWM / kIterM / kLanesM;       ///< 4 rows per lane per sub-tile.
  static constexpr int kTN = kWN / kIterN / kLanesN;       ///< 4 columns per lane per sub-tile.
  static constexpr int kThreads = 32 * kWarpsM * kWarpsN;  ///< 256.
};

/// Rungs 8 and 9 (BF16 inputs, FP32 accumulation): 128 × 128 block tiles, 32 deep, 8 warps of
/// 64 × 32 each.
struct TensorTile {
  static constexpr int kBM = 128;                          ///< Rows of C per block.
  static constexpr int kBN = 128;                          ///< Columns of C per block.
  static constexpr int kBK = 32;                           ///< K per step.
  static constexpr int kWarpsM = 2;                        ///< Warps down the block tile.
  static constexpr int kWarpsN = 4;                        ///< Warps across the block tile.
  static constexpr int kWM = kBM / kWarpsM;                ///< 64 rows per warp.
  static constexpr int kWN = kBN / kWarpsN;                ///< 32 columns per warp.
  static constexpr int kThreads = 32 * kWarpsM * kWarpsN;  ///< 256.
  static constexpr int kChunk = 8;                         ///< BF16 elements per 16-byte load.
  static constexpr int kStages = 3;        ///< Rung 9's shared-memory pipeline depth.
  static constexpr int kPad = 8;           ///< BF16 padding per shared row (bank conflicts).
  static constexpr int kLdA = kBK + kPad;  ///< Shared A row: 40 BF16 = 80 bytes.
  static constexpr int kLdB = kBN + kPad;  ///< Shared B row: 136 BF16 = 272 bytes.
  /// Rung 9's dynamic shared memory: kStages × (A tile + B tile), padded, 2 bytes each.
  static constexpr int kPipelineSmemBytes = kStages * (kBM * kLdA + kBK * kLdB) * 2;  // 56832
};

//! [naive-vs-coalesced]
// ---- rung 1: naive. threadIdx.x walks down a column of C: neighbours in a warp read A rows
// K elements apart, so a warp's 32 loads touch 32 different sectors.
/// Rung 1: the C element of thread (tx, ty) in block (bx, by) — global, not tile-relative.
BOOK_HD constexpr Coord naive_output(int bx, int by, int tx, int ty) {
  return {bx * SquareTiles::kSide + tx, by * SquareTiles::kSide + ty};
}

// ---- rung 2: coalesced. threadIdx.x walks along a row of C: a warp reads one A element
// (broadcast) and 32 consecutive B elements (4 sectors).
/// Rung 2: the C element of thread (tx, ty) in block (bx, by) — global.
BOOK_HD constexpr Coord coalesced_output(int bx, int by, int tx, int ty) {
  return {by * SquareTiles::kSide + ty, bx * SquareTiles::kSide + tx};
}
//! [naive-vs-coalesced]

// ---- rung 4: 1D block tiling.
/// Rung 4: the A element thread `t` copies at each step (tile-relative, 64 × 8 tile).
BOOK_HD constexpr Coord blocktile_1d_a(int t) {
  return cooperative_chunk(t, BlockTile1d::kThreads, 0, BlockTile1d::kBK, 1);
}
/// Rung 4: the B element thread `t` copies at each step (tile-relative, 8 × 64 tile).
BOOK_HD constexpr Coord blocktile_1d_b(int t) {
  return cooperative_chunk(t, BlockTile1d::kThreads, 0, BlockTile1d::kBN, 1);
}
/// Rung 4: the first of the TM results (a column) of thread `t`, tile-relative.
BOOK_HD constexpr Coord blocktile_1d_output(int t) {
  return {(t / BlockTile1d::kBN) * BlockTile1d::kTM, t % BlockTile1d::kBN};
}

// ---- rung 6: vectorised. Same tiles as rung 5, read as float4.
/// Rung 6: the 4-float chunk of A thread `t` copies (tile-relative, 128 × 8 tile).
BOOK_HD constexpr Coord vectorised_a(int t) {
  return cooperative_chunk(t, BlockTile2d::kThreads, 0, BlockTile2d::kBK, 4);
}
/// Rung 6: the 4-float chunk of B thread `t` copies (tile-relative, 8 × 128 tile).
BOOK_HD constexpr Coord vectorised_b(int t) {
  return cooperative_chunk(t, BlockTile2d::kThreads, 0, BlockTile2d::kBN, 4);
}
/// Rung 6: the top-left of thread `t`'s 8 × 8 results, tile-relative.
BOOK_HD constexpr Coord vectorised_output(int t) {
  constexpr int kThreadsAcross = BlockTile2d::kBN / BlockTile2d::kTN;  // 16
  return {(t / kThreadsAcross) * BlockTile2d::kTM, (t % kThreadsAcross) * BlockTile2d::kTN};
}

// ---- rung 7: warp tiling.
/// Rung 7: the `i`-th 4-float chunk of A thread `t` copies (tile-relative, 128 × 16 tile).
BOOK_HD constexpr Coord warptile_a(int t, int i) {
  return cooperative_chunk(t, WarpTile::kThreads, i, WarpTile::kBK, 4);
}
/// Rung 7: the `i`-th 4-float chunk of B thread `t` copies (tile-relative, 16 × 128 tile).
BOOK_HD constexpr Coord warptile_b(int t, int i) {
  return cooperative_chunk(t, WarpTile::kThreads, i, WarpTile::kBN, 4);
}
/// Rung 7: the top-left of the 4 × 4 results of thread `t` in its warp's sub-tile (wm, wn).
BOOK_HD constexpr Coord warptile_output(int t, int wm, int wn) {
  const int warp = t / 32, lane = t % 32;
  const int warp_row = warp / WarpTile::kWarpsN, warp_col = warp % WarpTile::kWarpsN;
  return {warp_row * WarpTile::kWM + wm * (WarpTile::kWM / WarpTile::kIterM) +
              (lane / WarpTile::kLanesN) * WarpTile::kTM,
          warp_col * WarpTile::kWN + wn * (WarpTile::kWN / WarpTile::kIterN) +
              (lane % WarpTile::kLanesN) * WarpTile::kTN};
}

// ---- rungs 8 and 9: tensor cores. Both copy tiles in 16-byte chunks of 8 BF16 values.
/// Rung 9: the `i`-th 8-element chunk of A thread `t` copies (tile-relative, 128 × 32 tile).
BOOK_HD constexpr Coord tensor_a_chunk(int t, int i) {
  return cooperative_chunk(t, TensorTile::kThreads, i, TensorTile::kBK, TensorTile::kChunk);
}
/// Rung 9: the `i`-th 8-element chunk of B thread `t` copies (tile-relative, 32 × 128 tile).
BOOK_HD constexpr Coord tensor_b_chunk(int t, int i) {
  return cooperative_chunk(t, TensorTile::kThreads, i, TensorTile::kBN, TensorTile::kChunk);
}
/// Rung 9 (mma.sync m16n8k16): the C element that accumulator register `reg` (0–3) of thread
/// `t` holds for the warp's fragment (mi, ni), tile-relative. PTX ISA layout: lane = 4·g + q
/// holds rows g and g + 8, columns 2q and 2q + 1.
BOOK_HD constexpr Coord mma_output(int t, int mi, int ni, int reg) {
  const int warp = t / 32, lane = t % 32;
  const int warp_row = warp / TensorTile::kWarpsN, warp_col = warp % TensorTile::kWarpsN;
  const int g = lane / 4, q = lane % 4;
  return {warp_row * TensorTile::kWM + mi * 16 + g + (reg / 2) * 8,
          warp_col * TensorTile::kWN + ni * 8 + q * 2 + reg % 2};
}

}  // namespace book::gemm_cuda
