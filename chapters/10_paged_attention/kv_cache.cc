#include "chapters/10_paged_attention/kv_cache.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "common/check.h"

namespace book::kv {

PagedKvCache::PagedKvCache(const KvShape& shape, int num_blocks, int block_size)
    : shape_(shape), num_blocks_(num_blocks), block_size_(block_size) {
  shape.validate();
  check_block_size("PagedKvCache", block_size);
  BOOK_CHECK(num_blocks >= 1, "PagedKvCache: the pool needs at least 1 block, got "
                                  << num_blocks << " (is the KV budget smaller than one block?)");
  const auto numbers =
      static_cast<std::size_t>(kv_pool_numbers("PagedKvCache", shape, num_blocks, block_size));
  keys_ = AlignedBuffer<float>(numbers);
  values_ = AlignedBuffer<float>(numbers);
}

std::size_t PagedKvCache::bytes() const { return (keys_.size() + values_.size()) * sizeof(float); }

float* PagedKvCache::at(const AlignedBuffer<float>& pool, int layer, BlockId block, int head,
                        int slot) const {
  const std::size_t layer_numbers =
      static_cast<std::size_t>(num_blocks_) * block_size_ * shape_.numbers_per_layer_token();
  const std::size_t index =
      layer * layer_numbers +
      ((static_cast<std::size_t>(block) * shape_.n_head + head) * block_size_ + slot) *
          shape_.head_dim;
  return const_cast<float*>(pool.data()) + index;
}

LayerKvView PagedKvCache::layer(int layer) const {
  BOOK_CHECK(layer >= 0 && layer < shape_.n_layer,
             "PagedKvCache::layer: layer " << layer << " is not in 0.." << shape_.n_layer - 1);
  return {at(keys_, layer, 0, 0, 0),
          at(values_, layer, 0, 0, 0),
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
  const int d = shape_.head_dim;
  for (int h = 0; h < shape_.n_head; ++h) {  // one token's row scatters into one slot per head
    std::memcpy(at(keys_, layer, slot.block, h, slot.offset), keys + h * d, d * sizeof(float));
    std::memcpy(at(values_, layer, slot.block, h, slot.offset), values + h * d, d * sizeof(float));
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
    for (int h = 0; h < shape_.n_head; ++h)
      for (const AlignedBuffer<float>* pool : {&keys_, &values_})
        std::memcpy(at(*pool, layer, copy.destination, h, 0), at(*pool, layer, copy.source, h, 0),
                    count * sizeof(float));
}

void PagedKvCache::poison() {
  std::fill(keys_.begin(), keys_.end(), std::numeric_limits<float>::quiet_NaN());
  std::fill(values_.begin(), values_.end(), std::numeric_limits<float>::quiet_NaN());
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
