/// @file
/// How a PagedKvCache stores its numbers: FP32 (the chapter's default, what every kernel here
/// reads), or INT8 with static scales, one byte per key or value.
///
/// INT8 is what production engines do with a KV cache in 8 bits and static scales (vLLM's
/// kv_cache_dtype with k_scale and v_scale): the scales are fixed before serving, from a
/// calibration run, so writing a token is a multiply, a round and a clamp, and no block ever needs
/// re-quantising when later tokens arrive. Here one scale per (layer, head), separately for keys
/// and values: x ≈ s · q with q in [−127, 127]; a number past 127 · s saturates. This chapter
/// only stores the bytes; the calibration and the kernel that attends over them are chapter 14's,
/// handed to the runner with ModelRunner::use_attention.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "chapters/10_paged_attention/block_allocator.h"
#include "chapters/10_paged_attention/kv_shape.h"

namespace book::kv {

/// How a cache stores one key or value number.
enum class KvPrecision {
  kF32,   ///< 4 bytes, what chapter 10's kernels read (LayerKvView)
  kInt8,  ///< 1 byte with a static scale per (layer, head, K/V) (LayerKvInt8View)
};

/// "fp32" or "int8".
const char* kv_precision_name(KvPrecision precision);

/// Bytes of one key or value number: 4 or 1.
int kv_precision_bytes(KvPrecision precision);

/// Bytes of KV cache per token at `precision`: 2 · layers · heads · head_dim · 4 (or · 1), the
/// scales not included (they are stored once per cache, kv_int8_scale_bytes). Throws book::Error
/// if the shape is invalid.
std::int64_t kv_bytes_per_token(const KvShape& shape, KvPrecision precision);

/// The largest INT8 code a cache stores; −127 the smallest (−128 is never written, which keeps
/// the grid symmetric and marks a poisoned slot).
inline constexpr int kKvInt8Max = 127;

/// The static scales of an INT8 cache: key ≈ keys[layer · n_head + head] · q, likewise values.
struct KvInt8Scales {
  std::vector<float> keys;    ///< [n_layer][n_head]
  std::vector<float> values;  ///< [n_layer][n_head]

  /// Throws book::Error unless both hold n_layer · n_head scales, each finite and > 0 (naming the
  /// first bad one: a scale of 0 or NaN would turn every number of its head into NaN).
  void validate(const KvShape& shape) const;
};

/// Bytes the scales take: 2 · n_layer · n_head floats, once per cache (not per token).
std::int64_t kv_int8_scale_bytes(const KvShape& shape);

/// The INT8 code of `x` with scale `scale`: x / scale rounded to nearest (ties away from zero),
/// saturated to [−127, 127]. `x` must be finite and `scale` > 0 (the cache checks both first).
std::int8_t kv_int8_quantize(float x, float scale);

/// One layer's INT8 pools as an INT8 kernel reads them: the layout of LayerKvView (element (block
/// b, head h, slot s, dim d) at keys[offset(b, h, s) + d]), one byte each, with this layer's
/// scales: key = key_scales[h] · keys[…].
struct LayerKvInt8View {
  const std::int8_t* keys = nullptr;    ///< [num_blocks][n_head][block_size][head_dim]
  const std::int8_t* values = nullptr;  ///< same layout as keys
  const float* key_scales = nullptr;    ///< [n_head]
  const float* value_scales = nullptr;  ///< [n_head]
  int num_blocks = 0;                   ///< blocks in the pool
  int block_size = 0;                   ///< token slots per block
  int n_head = 0;                       ///< heads
  int head_dim = 0;                     ///< numbers per head

  /// Index of (block, head, slot, 0).
  std::size_t offset(BlockId block, int head, int slot) const {
    return ((static_cast<std::size_t>(block) * n_head + head) * block_size + slot) * head_dim;
  }
};

}  // namespace book::kv
