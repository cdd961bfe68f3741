#include "chapters/14_quantization/kv_int8_calibrate.h"

#include <algorithm>
#include <cmath>

#include "chapters/10_paged_attention/model_runner.h"
#include "common/check.h"

namespace book::quant {

KvAbsmax::KvAbsmax(const kv::KvShape& shape) : shape_(shape) {
  shape.validate();
  const std::size_t heads = static_cast<std::size_t>(shape.n_layer) * shape.n_head;
  keys_.assign(heads, 0.0f);
  values_.assign(heads, 0.0f);
  tokens_.assign(shape.n_layer, 0);
}

void KvAbsmax::observe(int layer, const float* keys, const float* values) {
  BOOK_CHECK(layer >= 0 && layer < shape_.n_layer,
             "KvAbsmax::observe: layer " << layer << " is not in 0.." << shape_.n_layer - 1);
  const int d = shape_.head_dim, n = shape_.numbers_per_layer_token();
  for (int i = 0; i < n; ++i)
    BOOK_CHECK(std::isfinite(keys[i]) && std::isfinite(values[i]),
               "KvAbsmax::observe: layer " << layer << ", head " << i / d << ", number " << i % d
                                           << " is " << keys[i] << " (key) and " << values[i]
                                           << " (value); calibrate on a model whose keys and "
                                              "values are finite");
  for (int h = 0; h < shape_.n_head; ++h) {
    float& key_max = keys_[static_cast<std::size_t>(layer) * shape_.n_head + h];
    float& value_max = values_[static_cast<std::size_t>(layer) * shape_.n_head + h];
    for (int i = h * d; i < (h + 1) * d; ++i) {
      key_max = std::max(key_max, std::abs(keys[i]));
      value_max = std::max(value_max, std::abs(values[i]));
    }
  }
  ++tokens_[layer];
}

void KvAbsmax::observe_cache(const kv::PagedKvCache& cache, std::span<const kv::BlockId> table,
                             int tokens) {
  BOOK_CHECK(cache.shape() == shape_,
             "KvAbsmax::observe_cache: the cache's shape ("
                 << cache.shape().n_layer << " layers, " << cache.shape().n_head << " heads of "
                 << cache.shape().head_dim << ") is not the calibration's");
  const int bs = cache.block_size(), d = shape_.head_dim;
  BOOK_CHECK(tokens >= 0 && static_cast<int>(table.size()) >= kv::blocks_for(tokens, bs),
             "KvAbsmax::observe_cache: " << tokens << " tokens need " << kv::blocks_for(tokens, bs)
                                         << " blocks of " << bs << ", the table has "
                                         << table.size());
  std::vector<float> keys(shape_.numbers_per_layer_token()), values(keys.size());
  for (int layer = 0; layer < shape_.n_layer; ++layer) {
    const kv::LayerKvView view = cache.layer(layer);  // refuses an INT8 cache
    for (int p = 0; p < tokens; ++p) {
      for (int h = 0; h < shape_.n_head; ++h) {  // the cache keeps heads apart; a row does not
        const std::size_t at = view.offset(table[p / bs], h, p % bs);
        std::copy_n(view.keys + at, d, keys.begin() + h * d);
        std::copy_n(view.values + at, d, values.begin() + h * d);
      }
      observe(layer, keys.data(), values.data());
    }
  }
}

std::int64_t KvAbsmax::tokens() const { return *std::min_element(tokens_.begin(), tokens_.end()); }

kv::KvInt8Scales kv_int8_scales(const KvAbsmax& absmax, double margin) {
  BOOK_CHECK(
      std::isfinite(margin) && margin >= 0 && margin <= 10,
      "kv_int8_scales: margin " << margin << " is not in [0, 10] (0.1 widens the range by 10%)");
  BOOK_CHECK(absmax.tokens() >= 1,
             "kv_int8_scales: no calibration tokens were observed (every layer needs at least "
             "one); run the FP32 model over calibration sequences first");
  const auto scale = [&](float max) {
    return max > 0 ? static_cast<float>(max * (1.0 + margin) / kv::kKvInt8Max) : 1.0f;
  };
  kv::KvInt8Scales scales;
  for (const float m : absmax.keys()) scales.keys.push_back(scale(m));
  for (const float m : absmax.values()) scales.values.push_back(scale(m));
  scales.validate(absmax.shape());
  return scales;
}

kv::KvInt8Scales calibrate_kv_int8(train::Model<float>& model,
                                   const std::vector<std::vector<int>>& sequences, double margin) {
  BOOK_CHECK(!sequences.empty(),
             "calibrate_kv_int8: no calibration sequences; give it a few of the task's prompts");
  std::size_t longest = 0;
  for (std::size_t i = 0; i < sequences.size(); ++i) {
    BOOK_CHECK(!sequences[i].empty(), "calibrate_kv_int8: calibration sequence "
                                          << i << " is empty (no tokens to calibrate on)");
    longest = std::max(longest, sequences[i].size());
  }
  const kv::KvShape shape = kv::kv_shape_of(model.config());
  const int block_size = 16, rows = static_cast<int>(longest);
  const int blocks = kv::blocks_for(rows, block_size);
  kv::PagedKvCache cache(shape, blocks, block_size);
  kv::ModelRunner runner(model, cache, rows);
  std::vector<kv::BlockId> table(blocks);
  for (int b = 0; b < blocks; ++b) table[b] = b;
  KvAbsmax absmax(shape);
  for (const auto& sequence : sequences) {
    const kv::SequenceChunk chunk{sequence, 0, table, false};
    runner.run({&chunk, 1});
    absmax.observe_cache(cache, table, static_cast<int>(sequence.size()));
  }
  return kv_int8_scales(absmax, margin);
}

}  // namespace book::quant
