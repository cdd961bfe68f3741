/// @file
/// Attention over a paged KV cache: one query row against the keys and values of its sequence,
/// read block by block through the sequence's block table.
///
/// The kernels here serve decoding (one new token per sequence) and prefill (many new tokens per
/// sequence, each a query row that sees the positions up to and including its own). The cache
/// layout is one layer's pool of blocks, each [n_head][block_size][head_dim] for K and the same
/// for V: the keys of one head in one block are block_size · head_dim consecutive numbers, what a
/// kernel streams. The contiguous baseline is the same layout with one block of max_len slots
/// per sequence, so every kernel runs on both.
#pragma once

#include <cstddef>
#include <span>

#include "chapters/10_paged_attention/block_allocator.h"

namespace book::kv {

/// One layer's K and V pools as a kernel reads them. Element (block b, head h, slot s, dim d) is
/// at keys[offset(b, h, s) + d] (likewise values).
struct LayerKvView {
  const float* keys = nullptr;    ///< [num_blocks][n_head][block_size][head_dim]
  const float* values = nullptr;  ///< same layout as keys
  int num_blocks = 0;             ///< blocks in the pool
  int block_size = 0;             ///< token slots per block
  int n_head = 0;                 ///< heads
  int head_dim = 0;               ///< numbers per head

  /// Index of (block, head, slot, 0).
  std::size_t offset(BlockId block, int head, int slot) const {
    return ((static_cast<std::size_t>(block) * n_head + head) * block_size + slot) * head_dim;
  }
};

/// One query row: a token's queries for every head, attending to positions [0, context_len) of
/// its sequence (for a token at position p, context_len = p + 1: causal).
struct AttentionQuery {
  const float* query = nullptr;          ///< [n_head · head_dim], head h at h · head_dim
  float* out = nullptr;                  ///< [n_head · head_dim], written
  std::span<const BlockId> block_table;  ///< the sequence's blocks; at least ⌈context_len / B⌉
  int context_len = 0;                   ///< positions attended to, >= 1
};

/// Throws book::Error (naming `who`) unless the view is well formed (pointers, positive sizes)
/// and every query has pointers, context_len >= 1, a table covering ⌈context_len / block_size⌉
/// blocks, and block ids inside the pool. Every kernel calls it first.
void check_attention_args(const char* who, const LayerKvView& kv,
                          std::span<const AttentionQuery> queries);

/// Exercise kv.paged_attention: for every query and head h, with q = query[h], K_t and V_t the
/// head's key and value of position t (found in block table[t / B], slot t mod B):
///   out[h] = Σ_t softmax_t(q · K_t / √head_dim) · V_t over t in [0, context_len).
/// A plain, readable loop in float (subtract the maximum score before exp). Checks its arguments
/// with check_attention_args first.
/// \exercise{kv.paged_attention}
void paged_attention_reference(const LayerKvView& kv, std::span<const AttentionQuery> queries);

}  // namespace book::kv
