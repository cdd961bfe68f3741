/// @file
/// Causal attention that never materialises the T × T matrix: a tiled, FlashAttention-style
/// forward and backward on the CPU (Dao et al., "FlashAttention: Fast and Memory-Efficient Exact
/// Attention with IO-Awareness", NeurIPS 2022, Algorithms 1 and 2).
///
/// The layout is chapter 4's attention_forward: qkv [B·T, 3·H·D] (each row the queries of all
/// heads, then the keys, then the values), out [B·T, H·D], scores scaled by 1/√D, causal. Chapter
/// 4 keeps the probabilities att [B, H, T, T] for the backward; this forward keeps one number per
/// query row instead, the log-sum-exp of its scores, lse [B, H, T], and the backward recomputes
/// the scores tile by tile from it. Scratch is one tile of scores (tile × tile), and per query
/// tile its running max, running sum and output accumulator (forward) or its rowsum(dO ∘ O)
/// (backward): what a GPU would keep in SRAM. Every buffer is a TrackedBuffer, so a tracker
/// counts what the tiled attention holds.
#pragma once

#include <cstddef>

#include "common/memory.h"

namespace book::mem {

/// Sizes of one tiled attention call; validated by check().
struct FlashShape {
  int batch = 1;      ///< B, sequences
  int seq_len = 1;    ///< T, tokens per sequence
  int n_head = 1;     ///< H, heads
  int head_size = 1;  ///< D, width of one head
  int tile = 16;  ///< rows of queries and of keys/values per tile (any T; the last tile is short)

  /// Throws book::Error naming the field and its value when any size is below 1.
  void check() const;
  /// B·H·T: one log-sum-exp (or one rowsum(dO ∘ O)) per query row and head.
  std::size_t rows() const;
  /// H·D: one token's row of the output (and of each of q, k, v).
  std::size_t width() const { return static_cast<std::size_t>(n_head) * head_size; }
  /// 3·H·D: one token's row of qkv (q, then k, then v: chapter 4's layout).
  std::size_t qkv_row() const { return 3 * width(); }
  /// The row of token t of sequence b, in qkv and in the output.
  std::size_t token(int b, int t) const { return static_cast<std::size_t>(b) * seq_len + t; }
};

/// Bytes of scratch the tiled forward holds besides lse: a tile × tile score tile, a tile's running
/// max and sum, and its tile × D output accumulator, in `element_bytes`-byte elements.
std::size_t flash_forward_scratch_bytes(const FlashShape& shape, std::size_t element_bytes);
/// Bytes of scratch the tiled backward holds: rowsum(dO ∘ O) for every row (B·H·T), a score tile
/// and its gradient tile (2 · tile × tile).
std::size_t flash_backward_scratch_bytes(const FlashShape& shape, std::size_t element_bytes);

/// Exercise mem.flash_attention_forward: writes out [B·T, H·D] and lse [B·H·T] (index (b·H + h)·T +
/// t) from qkv, tile by tile with an online softmax (a running max and sum per query row). Scratch
/// is reported to `tracker` (may be null) under kOther.
template <typename T>
void flash_attention_forward(const T* qkv, const FlashShape& shape, T* out, T* lse,
                             MemoryTracker* tracker = nullptr);

/// Writes (overwrites) dqkv [B·T, 3·H·D] given dout [B·T, H·D] and the forward's qkv, out and lse;
/// recomputes each score tile as exp(S − lse) instead of reading stored probabilities. Scratch is
/// reported to `tracker` (may be null) under kOther.
template <typename T>
void flash_attention_backward(const T* dout, const T* qkv, const T* out, const T* lse,
                              const FlashShape& shape, T* dqkv, MemoryTracker* tracker = nullptr);

}  // namespace book::mem
