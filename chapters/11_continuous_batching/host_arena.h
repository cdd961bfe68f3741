/// @file
/// The host arena of preemption by swap: a second pool of KV blocks, in host memory, with a
/// fixed number of blocks (its budget). A swapped-out request's keys and values are copied here
/// from the device cache (chapter 10's PagedKvCache) and copied back into fresh device blocks
/// when it resumes; the Scheduler decides which blocks (SwapCopy), this only moves the numbers
/// and counts the bytes. On a GPU the two copies would be cudaMemcpyAsync over PCIe.
#pragma once

#include <cstdint>

#include "chapters/10_paged_attention/kv_cache.h"
#include "chapters/11_continuous_batching/scheduler_state.h"
#include "common/buffer.h"

namespace book::serve {

/// See the file comment. A host block holds, for every layer, block_size token rows of keys and
/// of values (n_head · head_dim floats each, as PagedKvCache::write takes them).
class HostKvArena {
 public:
  /// Throws book::Error if num_blocks < 1, block_size < 1 or the shape is invalid.
  HostKvArena(const kv::KvShape& shape, int num_blocks, int block_size);

  /// Copies positions [copy.first, copy.positions) of copy.id from `cache` into the arena;
  /// returns the bytes copied (keys and values). Throws book::Error if a device or host block is
  /// out of range, the cache's shape or block size is not the arena's, or the positions are no
  /// range.
  std::int64_t swap_out(const kv::PagedKvCache& cache, const SwapCopy& copy);
  /// Copies positions [copy.first, copy.positions) back into `cache`; returns the bytes copied.
  /// Throws book::Error as swap_out() does.
  std::int64_t swap_in(kv::PagedKvCache& cache, const SwapCopy& copy) const;

  int num_blocks() const { return num_blocks_; }  ///< the budget
  std::int64_t bytes() const;                     ///< host memory it holds
  /// Bytes one position moves: 2 · layers · heads · head_dim · 4 (chapter 10's per-token KV).
  std::int64_t bytes_per_position() const;

 private:
  float* row(const AlignedBuffer<float>& pool, int block, int layer, int slot) const;
  void check(const kv::PagedKvCache& cache, const SwapCopy& copy, const char* who) const;

  kv::KvShape shape_;
  int num_blocks_, block_size_;
  AlignedBuffer<float> keys_, values_;  // [block][layer][slot][head · head_dim]
};

}  // namespace book::serve
