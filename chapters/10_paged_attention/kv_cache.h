/// @file
/// Where the keys and values live: a pool of blocks per layer (paged), or one max-length slot per
/// request (the contiguous baseline, which is the same storage with one block of max_len slots).
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "chapters/10_paged_attention/copy_on_write.h"
#include "chapters/10_paged_attention/kv_shape.h"
#include "chapters/10_paged_attention/paged_attention.h"
#include "common/buffer.h"

namespace book::kv {

/// The KV cache of one model: for every layer a pool of `num_blocks` blocks, each holding the
/// keys (and, separately, the values) of `block_size` tokens as [n_head][block_size][head_dim]
/// floats. Allocated once, at construction: bytes() = num_blocks · block_size ·
/// kv_bytes_per_token(shape, f32). Which block belongs to whom is the BlockManager's business.
class PagedKvCache {
 public:
  /// Throws book::Error if the shape is invalid, num_blocks < 1 or block_size < 1.
  PagedKvCache(const KvShape& shape, int num_blocks, int block_size);

  const KvShape& shape() const { return shape_; }  ///< layers, heads, head_dim
  int num_blocks() const { return num_blocks_; }   ///< blocks per layer
  int block_size() const { return block_size_; }   ///< token slots per block
  /// Bytes of keys and values together.
  std::size_t bytes() const;

  /// Layer `layer`'s pools as the attention kernels read them.
  LayerKvView layer(int layer) const;
  /// Writes one token's keys and values of layer `layer` (n_head · head_dim floats each, head h
  /// at h · head_dim: a row of a qkv projection) into `slot`.
  void write(int layer, const Slot& slot, const float* keys, const float* values);
  /// Copy-on-write: slots [0, copy.tokens) of copy.source into copy.destination, every layer,
  /// keys and values.
  void copy(const BlockCopy& copy);
  /// Fills every key and value with NaN, so a test sees any slot read before it was written.
  void poison();

 private:
  float* at(const AlignedBuffer<float>& pool, int layer, BlockId block, int head, int slot) const;
  void check_slot(const char* who, int layer, const Slot& slot) const;

  KvShape shape_;
  int num_blocks_, block_size_;
  AlignedBuffer<float> keys_, values_;  // [layer][block][head][slot][head_dim]
};

/// The contiguous baseline: room for `max_sequences` sequences of up to `max_len` tokens each,
/// every one reserved at its full length when it is admitted, whatever its real length will be
/// (what serving systems did before paging). Slot i is block i of a PagedKvCache with
/// block_size = max_len, so its block table is {i} and the same kernels read it.
class ContiguousKvCache {
 public:
  /// Throws book::Error if the shape is invalid or max_sequences or max_len < 1.
  ContiguousKvCache(const KvShape& shape, int max_sequences, int max_len);

  /// A free slot for a new sequence, or nothing when all max_sequences are taken.
  std::optional<BlockId> acquire();
  /// Gives slot `slot` back; throws book::Error if it is not taken (freed twice included).
  void release(BlockId slot);
  /// The storage (block_size = max_len).
  PagedKvCache& storage() { return storage_; }
  /// The storage (block_size = max_len).
  const PagedKvCache& storage() const { return storage_; }
  int max_len() const { return storage_.block_size(); }        ///< slots per sequence
  int max_sequences() const { return storage_.num_blocks(); }  ///< sequences it can hold
  int in_use() const;                                          ///< slots taken

 private:
  PagedKvCache storage_;
  std::vector<bool> taken_;
};

}  // namespace book::kv
