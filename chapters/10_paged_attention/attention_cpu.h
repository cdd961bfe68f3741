/// @file
/// The fast CPU paged attention (chapter code, not an exercise): the reference kernel's math
/// (paged_attention.h), vectorised and spread over threads.
///
/// Per query and head, three passes: the scores q·K_t of every position, block by block through
/// the table (each block's keys for one head are block_size · head_dim consecutive floats, read
/// once); a softmax over the scores, which now sit in one contiguous scratch array (vector exp);
/// and Σ_t p_t·V_t block by block. Every sum runs in an order that depends only on head_dim and
/// the position, never on where a block boundary falls: the same query gives bit-identical
/// outputs for any block size, the contiguous cache (one block of max_len) included, and for any
/// thread count. The (query, head) pairs of one call are split into one contiguous range per
/// thread.
#pragma once

#include <span>
#include <vector>

#include "chapters/10_paged_attention/paged_attention.h"
#include "chapters/10_paged_attention/thread_team.h"

namespace book::kv {

/// The fast kernel with its threads and per-thread scratch, kept between calls.
class CpuPagedAttention {
 public:
  /// `threads` threads (the caller is one of them); throws book::Error if threads < 1.
  explicit CpuPagedAttention(int threads = 1);
  /// out = softmax(q·Kᵀ/√d)·V for every query and head, as paged_attention_reference defines it
  /// (same arguments, same checks), to within float rounding.
  void run(const LayerKvView& kv, std::span<const AttentionQuery> queries);
  /// Threads used.
  int threads() const { return team_.size(); }
  /// Whether this build uses the AVX2 + FMA path (x86-64-v3, the book's default) or plain loops.
  static bool vectorised();

 private:
  ThreadTeam team_;
  std::vector<std::vector<float>> scores_;  // one scratch per thread, grown to the longest context
};

}  // namespace book::kv
