/// @file
/// Where the keys and values live: a pool of blocks per layer (paged), or one max-length slot per
/// request (the contiguous baseline, which is the same storage with one block of max_len slots).
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "chapters/10_paged_attention/copy_on_write.h"
#include "chapters/10_paged_attention/kv_precision.h"
#include "chapters/10_paged_attention/kv_shape.h"
#include "chapters/10_paged_attention/paged_attention.h"
#include "common/buffer.h"

namespace book::kv {

/// The KV cache of one model: for every layer a pool of `num_blocks` blocks, each holding the
/// keys (and, separately, the values) of `block_size` tokens as [n_head][block_size][head_dim]
/// floats (or bytes, for an INT8 cache: kv_precision.h). Allocated once, at construction:
/// bytes() = num_blocks · block_size · kv_bytes_per_token(shape, precision). Which block belongs
/// to whom is the BlockManager's business.
class PagedKvCache {
 public:
  /// An FP32 cache. Throws book::Error if the shape is invalid, num_blocks < 1 or block_size < 1.
  PagedKvCache(const KvShape& shape, int num_blocks, int block_size);
  /// An INT8 cache with static `scales` (one byte per number). Throws book::Error as the FP32
  /// one does, or if the scales do not fit the shape or one is not finite and > 0.
  PagedKvCache(const KvShape& shape, int num_blocks, int block_size, KvInt8Scales scales);

  const KvShape& shape() const { return shape_; }       ///< layers, heads, head_dim
  int num_blocks() const { return num_blocks_; }        ///< blocks per layer
  int block_size() const { return block_size_; }        ///< token slots per block
  KvPrecision precision() const { return precision_; }  ///< FP32 or INT8
  /// Bytes of keys and values together (an INT8 cache's scales not included: scale_bytes()).
  std::size_t bytes() const;
  /// Bytes of an INT8 cache's scales (kv_int8_scale_bytes); 0 for FP32.
  std::size_t scale_bytes() const;
  /// An INT8 cache's scales. Throws book::Error on an FP32 cache.
  const KvInt8Scales& int8_scales() const;

  /// Layer `layer`'s pools as the FP32 attention kernels read them. Throws book::Error on an INT8
  /// cache (its kernels read layer_int8()).
  LayerKvView layer(int layer) const;
  /// Layer `layer`'s INT8 pools and scales. Throws book::Error on an FP32 cache.
  LayerKvInt8View layer_int8(int layer) const;
  /// Writes one token's keys and values of layer `layer` (n_head · head_dim floats each, head h
  /// at h · head_dim: a row of a qkv projection) into `slot`. An INT8 cache quantises them with
  /// its scales (saturating at ±127), and first throws book::Error, writing nothing, if one is NaN
  /// or infinite (no code stands for it).
  void write(int layer, const Slot& slot, const float* keys, const float* values);
  /// Copy-on-write: slots [0, copy.tokens) of copy.source into copy.destination, every layer,
  /// keys and values.
  void copy(const BlockCopy& copy);
  /// Fills every key and value with NaN (INT8: with −128, a code write() never produces), so a
  /// test sees any slot read before it was written.
  void poison();

 private:
  std::size_t index(int layer, BlockId block, int head, int slot) const;
  float* at(const AlignedBuffer<float>& pool, int layer, BlockId block, int head, int slot) const;
  void check_slot(const char* who, int layer, const Slot& slot) const;
  void check_precision(const char* who, KvPrecision want) const;
  void write_int8(int layer, const Slot& slot, const float* keys, const float* values);

  KvShape shape_;
  int num_blocks_, block_size_;
  KvPrecision precision_ = KvPrecision::kF32;
  AlignedBuffer<float> keys_, values_;          // FP32: [layer][block][head][slot][head_dim]
  AlignedBuffer<std::int8_t> keys8_, values8_;  // INT8: the same layout, one byte each
  KvInt8Scales scales_;                         // INT8: [layer][head]
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
