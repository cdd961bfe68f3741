/// @file
/// What one token costs in a KV cache, and how many blocks a sequence needs.
///
/// Every layer keeps, for every past token, one key and one value vector per head: 2 · layers ·
/// heads · head_dim numbers per token. That is the whole formula; the rest of the chapter is
/// about where those numbers live.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/dtype.h"

namespace book::kv {

/// The shape of a model's KV cache.
struct KvShape {
  int n_layer = 0;   ///< transformer blocks, each with its own K and V
  int n_head = 0;    ///< key/value heads per block (a model with grouped-query attention has fewer
                     ///< than query heads; chapter 4's GPT has as many)
  int head_dim = 0;  ///< numbers per head and token

  /// Throws book::Error naming the first field that is not positive, or if n_head · head_dim
  /// passes INT_MAX or one token's keys and values in f32 pass kMaxKvBytes.
  void validate() const;
  /// Field by field.
  bool operator==(const KvShape&) const = default;
  /// Numbers per token over all layers, keys and values: 2 · n_layer · n_head · head_dim.
  std::int64_t numbers_per_token() const;
  /// Numbers one layer keeps per token for K (or for V): n_head · head_dim.
  int numbers_per_layer_token() const { return n_head * head_dim; }
};

/// The most bytes of keys and values one cache or arena may hold (1 TiB): far past any machine,
/// and low enough that no size computed from it can wrap.
inline constexpr std::int64_t kMaxKvBytes = std::int64_t{1} << 40;

/// The floats one pool of keys (or of values) holds: n_layer · blocks · block_size · n_head ·
/// head_dim, computed in int64. Throws book::Error naming `who` and the bytes if the shape is
/// invalid, blocks or block_size < 1, or keys and values in f32 would pass kMaxKvBytes.
std::int64_t kv_pool_numbers(const char* who, const KvShape& shape, std::int64_t blocks,
                             int block_size);

/// Bytes of KV cache per token: 2 · layers · heads · head_dim · dtype_size(element).
/// OPT-13B (40 layers, 40 heads of 128, FP16) gives 819,200 bytes, the "800 KB" of the vLLM paper.
std::int64_t kv_bytes_per_token(const KvShape& shape, DType element);

/// ⌈tokens / block_size⌉: the blocks a sequence of `tokens` tokens occupies. Throws book::Error
/// if block_size < 1 or tokens < 0.
int blocks_for(std::int64_t tokens, int block_size);

/// Throws book::Error unless 1 <= block_size: the check every constructor that takes a block
/// size runs, with `who` naming the caller in the message.
void check_block_size(const char* who, int block_size);

}  // namespace book::kv
