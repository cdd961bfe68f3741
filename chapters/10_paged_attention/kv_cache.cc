#include "chapters/10_paged_attention/kv_cache.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>

#include "common/check.h"

namespace book::kv {

namespace {
std::size_t checked_pool_numbers(const KvShape& shape, int num_blocks, int block_size) {
  shape.validate();
  check_block_size("PagedKvCache", block_size);
  BOOK_CHECK(num_blocks >= 1, "PagedKvCache: the pool needs at least 1 block, got "
                                  << num_blocks << " (is the KV budget smaller than one block?)");
  return static_cast<std::size_t>(kv_pool_numbers("PagedKvCache", shape, num_blocks, block_size));
}
}  // namespace

PagedKvCache::PagedKvCache(const KvShape& shape, int num_blocks, int block_size)
    : shape_(shape), num_blocks_(num_blocks), block_size_(block_size) {
  const std::size_t numbers = checked_pool_numbers(shape, num_blocks, block_size);
  keys_ = AlignedBuffer<float>(numbers);
  values_ = AlignedBuffer<float>(numbers);
}

PagedKvCache::PagedKvCache(const KvShape& shape, int num_blocks, int block_size,
                           KvInt8Scales scales)
    : shape_(shape),
      num_blocks_(num_blocks),
      block_size_(block_size),
      precision_(KvPrecision::kInt8),
      scales_(std::move(scales)) {
  const std::size_t numbers = checked_pool_numbers(shape, num_blocks, block_size);
  scales_.validate(shape);
  keys8_ = AlignedBuffer<std::int8_t>(numbers);
  values8_ = AlignedBuffer<std::int8_t>(numbers);
}

std::size_t PagedKvCache::bytes() const {
  return (keys_.size() + values_.size()) * sizeof(float) + keys8_.size() + values8_.size();
}

std::size_t PagedKvCache::scale_bytes() const {
  return precision_ == KvPrecision::kInt8 ? static_cast<std::size_t>(kv_int8_scale_bytes(shape_))
                                          : 0;
}

void PagedKvCache::check_precision(const char* who, KvPrecision want) const {
  BOOK_CHECK(precision_ == want,
             who << ": this cache holds " << kv_precision_name(precision_)
                 << " keys and values, not " << kv_precision_name(want)
                 << (want == KvPrecision::kF32 ? "; read an INT8 cache with layer_int8() and an "
                                                 "INT8 kernel (ModelRunner::use_attention)"
                                               : "; an FP32 cache has no scales or INT8 view"));
}

const KvInt8Scales& PagedKvCache::int8_scales() const {
  check_precision("PagedKvCache::int8_scales", KvPrecision::kInt8);
  return scales_;
}

std::size_t PagedKvCache::index(int layer, BlockId block, int head, int slot) const {
  const std::size_t layer_numbers =
      static_cast<std::size_t>(num_blocks_) * block_size_ * shape_.numbers_per_layer_token();
  return layer * layer_numbers +
         ((static_cast<std::size_t>(block) * shape_.n_head + head) * block_size_ + slot) *
             shape_.head_dim;
}

float* PagedKvCache::at(const AlignedBuffer<float>& pool, int layer, BlockId block, int head,
                        int slot) const {
  return const_cast<float*>(pool.data()) + index(layer, block, head, slot);
}

LayerKvView PagedKvCache::layer(int layer) const {
  check_precision("PagedKvCache::layer", KvPrecision::kF32);
  BOOK_CHECK(layer >= 0 && layer < shape_.n_layer,
             "PagedKvCache::layer: layer " << layer << " is not in 0.." << shape_.n_layer - 1);
  return {at(keys_, layer, 0, 0, 0),
          at(values_, layer, 0, 0, 0),
          num_blocks_,
          block_size_,
          shape_.n_head,
          shape_.head_dim};
}

LayerKvInt8View PagedKvCache::layer_int8(int layer) const {
  check_precision("PagedKvCache::layer_int8", KvPrecision::kInt8);
  BOOK_CHECK(layer >= 0 && layer < shape_.n_layer,
             "PagedKvCache::layer_int8: layer " << layer << " is not in 0.." << shape_.n_layer - 1);
  const std::size_t first = index(layer, 0, 0, 0),
                    heads = static_cast<std::size_t>(layer) * shape_.n_head;
  return {keys8_.data() + first,
          values8_.data() + first,
          scales_.keys.data() + heads,
          scales_.values.data() + heads,
          num_blocks_,
          block_size_,
          shape_.n_head,
          shape_.head_dim};
}

void PagedKvCache::check_slot(const char* who, int layer, const Slot& slot) const {
  BOOK_CHECK(layer >= 0 && layer < shape_.n_layer,
             who << ": layer " << layer << " is not in 0.." << shape_.n_layer - 1);
  BOOK_CHECK(
      slot.block >= 0 && slot.block < num_blocks_ && slot.offset >= 0 && slot.offset < block_size_,
      who << ": slot (block " << slot.block << ", offset " << slot.offset
          << ") is outside the pool of " << num_blocks_ << " blocks of " << block_size_);
}

void PagedKvCache::write(int layer, const Slot& slot, const float* keys, const float* values) {
  check_slot("PagedKvCache::write", layer, slot);
  if (precision_ == KvPrecision::kInt8) return write_int8(layer, slot, keys, values);
  const int d = shape_.head_dim;
  for (int h = 0; h < shape_.n_head; ++h) {  // one token's row scatters into one slot per head
    std::memcpy(at(keys_, layer, slot.block, h, slot.offset), keys + h * d, d * sizeof(float));
    std::memcpy(at(values_, layer, slot.block, h, slot.offset), values + h * d, d * sizeof(float));
  }
}

void PagedKvCache::write_int8(int layer, const Slot& slot, const float* keys, const float* values) {
  const int d = shape_.head_dim, n = shape_.numbers_per_layer_token();
  // Every number checked before any is written: a refused token leaves the slot as it was.
  for (const auto& [name, row] : {std::pair{"key", keys}, std::pair{"value", values}})
    for (int i = 0; i < n; ++i)
      BOOK_CHECK(std::isfinite(row[i]),
                 "PagedKvCache::write: " << name << " " << i % d << " of head " << i / d
                                         << " in layer " << layer << " is " << row[i]
                                         << "; an INT8 cache has no code for a NaN or an "
                                            "infinity (the model diverged upstream)");
  for (int h = 0; h < shape_.n_head; ++h) {
    const float key_scale = scales_.keys[static_cast<std::size_t>(layer) * shape_.n_head + h];
    const float value_scale = scales_.values[static_cast<std::size_t>(layer) * shape_.n_head + h];
    const std::size_t at = index(layer, slot.block, h, slot.offset);
    for (int i = 0; i < d; ++i) {
      keys8_.data()[at + i] = kv_int8_quantize(keys[h * d + i], key_scale);
      values8_.data()[at + i] = kv_int8_quantize(values[h * d + i], value_scale);
    }
  }
}

void PagedKvCache::copy(const BlockCopy& copy) {
  BOOK_CHECK(
      copy.tokens >= 0 && copy.tokens <= block_size_,
      "PagedKvCache::copy: " << copy.tokens << " tokens do not fit a block of " << block_size_);
  check_slot("PagedKvCache::copy (source)", 0, {copy.source, 0});
  check_slot("PagedKvCache::copy (destination)", 0, {copy.destination, 0});
  const std::size_t count = static_cast<std::size_t>(copy.tokens) * shape_.head_dim;
  for (int layer = 0; layer < shape_.n_layer; ++layer)
    for (int h = 0; h < shape_.n_head; ++h) {
      const std::size_t to = index(layer, copy.destination, h, 0);
      const std::size_t from = index(layer, copy.source, h, 0);
      if (precision_ == KvPrecision::kInt8) {
        std::memcpy(keys8_.data() + to, keys8_.data() + from, count);
        std::memcpy(values8_.data() + to, values8_.data() + from, count);
      } else {
        std::memcpy(keys_.data() + to, keys_.data() + from, count * sizeof(float));
        std::memcpy(values_.data() + to, values_.data() + from, count * sizeof(float));
      }
    }
}

void PagedKvCache::poison() {
  std::fill(keys_.begin(), keys_.end(), std::numeric_limits<float>::quiet_NaN());
  std::fill(values_.begin(), values_.end(), std::numeric_limits<float>::quiet_NaN());
  std::fill(keys8_.begin(), keys8_.end(), std::int8_t{-128});
  std::fill(values8_.begin(), values8_.end(), std::int8_t{-128});
}

namespace {
int checked_sequences(int max_sequences, int max_len) {
  BOOK_CHECK(max_sequences >= 1 && max_len >= 1, "ContiguousKvCache: room for "
                                                     << max_sequences << " sequences of " << max_len
                                                     << " tokens; both must be >= 1");
  return max_sequences;
}
}  // namespace

ContiguousKvCache::ContiguousKvCache(const KvShape& shape, int max_sequences, int max_len)
    : storage_(shape, checked_sequences(max_sequences, max_len), max_len),
      taken_(max_sequences, false) {}

std::optional<BlockId> ContiguousKvCache::acquire() {
  const auto free = std::find(taken_.begin(), taken_.end(), false);
  if (free == taken_.end()) return std::nullopt;
  *free = true;
  return static_cast<BlockId>(free - taken_.begin());
}

void ContiguousKvCache::release(BlockId slot) {
  BOOK_CHECK(slot >= 0 && slot < max_sequences() && taken_[slot],
             "ContiguousKvCache::release: slot " << slot << " is not taken (of " << max_sequences()
                                                 << ")");
  taken_[slot] = false;
}

int ContiguousKvCache::in_use() const {
  return static_cast<int>(std::count(taken_.begin(), taken_.end(), true));
}

}  // namespace book::kv
