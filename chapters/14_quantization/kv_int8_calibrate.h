/// @file
/// The static scales of an INT8 KV cache, calibrated from the FP32 model: run it over calibration
/// sequences, keep the largest |key| and |value| of every (layer, head), and set s = max · (1 +
/// margin) / 127. A number past the calibrated range saturates at ±127 when it is written (the
/// cache's job); the margin trades a little resolution for fewer saturated numbers.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "chapters/04_training_baseline/model.h"
#include "chapters/10_paged_attention/kv_cache.h"
#include "chapters/10_paged_attention/kv_precision.h"

namespace book::quant {

/// The largest |key| and |value| of every (layer, head) over the tokens observed.
class KvAbsmax {
 public:
  /// Nothing observed yet. Throws book::Error if the shape is invalid.
  explicit KvAbsmax(const kv::KvShape& shape);

  /// One token's keys and values of layer `layer` (n_head · head_dim floats each, head h at
  /// h · head_dim, as PagedKvCache::write takes them). Throws book::Error if the layer is out of
  /// range or a number is NaN or infinite (naming it).
  void observe(int layer, const float* keys, const float* values);
  /// Positions [0, tokens) of every layer of an FP32 `cache`, found through `table`. Throws
  /// book::Error if the cache is not FP32, its shape is not this one's, or the table is short.
  void observe_cache(const kv::PagedKvCache& cache, std::span<const kv::BlockId> table, int tokens);

  const kv::KvShape& shape() const { return shape_; }  ///< layers, heads, head_dim
  /// Tokens observed in every layer (the fewest of any layer).
  std::int64_t tokens() const;
  const std::vector<float>& keys() const { return keys_; }      ///< [n_layer][n_head]
  const std::vector<float>& values() const { return values_; }  ///< [n_layer][n_head]

 private:
  kv::KvShape shape_;
  std::vector<float> keys_, values_;
  std::vector<std::int64_t> tokens_;  // per layer
};

/// Scales from maxima: s = max · (1 + margin) / 127 for every (layer, head), K and V apart; a head
/// whose numbers were all zero gets s = 1 (its zeros stay exact; nothing divides by 0). Throws
/// book::Error if nothing was observed (a layer with no tokens: no calibration) or the margin is
/// negative, NaN or above 10.
kv::KvInt8Scales kv_int8_scales(const KvAbsmax& absmax, double margin = 0.0);

/// Runs the FP32 `model` (whole, on one device) over `sequences` (token ids, each within the
/// model's vocabulary and context; teacher-forced: every position's keys and values are those the
/// model writes when it reads that prefix) with an FP32 cache and returns kv_int8_scales of what
/// it wrote. Throws book::Error if there are no sequences or one is empty, or as ModelRunner::run
/// does on a bad token or a sequence longer than the context.
kv::KvInt8Scales calibrate_kv_int8(train::Model<float>& model,
                                   const std::vector<std::vector<int>>& sequences,
                                   double margin = 0.0);

}  // namespace book::quant
