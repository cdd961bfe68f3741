#include "chapters/11_continuous_batching/host_arena.h"

#include <cstring>

#include "common/check.h"

namespace book::serve {

HostKvArena::HostKvArena(const kv::KvShape& shape, int num_blocks, int block_size)
    : shape_(shape), num_blocks_(num_blocks), block_size_(block_size) {
  shape.validate();
  BOOK_CHECK(num_blocks >= 1, "HostKvArena: the arena needs at least 1 block, got " << num_blocks);
  BOOK_CHECK(block_size >= 1, "HostKvArena: block_size must be >= 1, got " << block_size);
  const auto numbers =
      static_cast<std::size_t>(kv::kv_pool_numbers("HostKvArena", shape, num_blocks, block_size));
  keys_ = AlignedBuffer<float>(numbers);
  values_ = AlignedBuffer<float>(numbers);
}

std::int64_t HostKvArena::bytes() const {
  return static_cast<std::int64_t>((keys_.size() + values_.size()) * sizeof(float));
}

std::int64_t HostKvArena::bytes_per_position() const {
  return 2 * static_cast<std::int64_t>(shape_.n_layer) * shape_.numbers_per_layer_token() *
         static_cast<std::int64_t>(sizeof(float));
}

float* HostKvArena::row(const AlignedBuffer<float>& pool, int block, int layer, int slot) const {
  const std::size_t index =
      ((static_cast<std::size_t>(block) * shape_.n_layer + layer) * block_size_ + slot) *
      shape_.numbers_per_layer_token();
  return const_cast<float*>(pool.data()) + index;
}

void HostKvArena::check(const kv::PagedKvCache& cache, const SwapCopy& copy,
                        const char* who) const {
  // A cache of another shape would be read and written with this arena's strides.
  const kv::KvShape& s = cache.shape();
  BOOK_CHECK(s == shape_, who << ": the cache's shape (" << s.n_layer << " layers, " << s.n_head
                              << " heads of " << s.head_dim << ") is not the arena's ("
                              << shape_.n_layer << " layers, " << shape_.n_head << " heads of "
                              << shape_.head_dim << ")");
  BOOK_CHECK(cache.block_size() == block_size_, who << ": the cache's blocks hold "
                                                    << cache.block_size()
                                                    << " positions, the arena's " << block_size_);
  BOOK_CHECK(copy.first >= 0 && copy.first <= copy.positions,
             who << ": positions [" << copy.first << ", " << copy.positions << ") of request "
                 << copy.id << " are not a range");
  const std::size_t blocks = (copy.positions + block_size_ - 1) / block_size_;
  BOOK_CHECK(copy.device_blocks.size() >= blocks && copy.host_blocks.size() >= blocks,
             who << ": request " << copy.id << " needs " << blocks << " blocks for "
                 << copy.positions << " positions, got " << copy.device_blocks.size()
                 << " device and " << copy.host_blocks.size() << " host blocks");
  for (const int b : copy.host_blocks)
    BOOK_CHECK(b >= 0 && b < num_blocks_,
               who << ": host block " << b << " is outside the arena of " << num_blocks_);
  for (const kv::BlockId b : copy.device_blocks)
    BOOK_CHECK(b >= 0 && b < cache.num_blocks(), who << ": device block " << b
                                                     << " is outside the cache of "
                                                     << cache.num_blocks() << " blocks");
}

//! [swap_copy]
std::int64_t HostKvArena::swap_out(const kv::PagedKvCache& cache, const SwapCopy& copy) {
  check(cache, copy, "HostKvArena::swap_out");
  const int d = shape_.head_dim;
  for (int layer = 0; layer < shape_.n_layer; ++layer) {
    const kv::LayerKvView view = cache.layer(layer);
    for (int p = copy.first; p < copy.positions; ++p) {
      const int block = copy.device_blocks[p / block_size_], slot = p % block_size_;
      float* keys = row(keys_, copy.host_blocks[p / block_size_], layer, slot);
      float* values = row(values_, copy.host_blocks[p / block_size_], layer, slot);
      for (int h = 0; h < shape_.n_head; ++h) {  // the device keeps heads apart, a row does not
        std::memcpy(keys + h * d, view.keys + view.offset(block, h, slot), d * sizeof(float));
        std::memcpy(values + h * d, view.values + view.offset(block, h, slot), d * sizeof(float));
      }
    }
  }
  return (copy.positions - copy.first) * bytes_per_position();
}

std::int64_t HostKvArena::swap_in(kv::PagedKvCache& cache, const SwapCopy& copy) const {
  check(cache, copy, "HostKvArena::swap_in");
  for (int layer = 0; layer < shape_.n_layer; ++layer)
    for (int p = copy.first; p < copy.positions; ++p) {
      const int host = copy.host_blocks[p / block_size_], slot = p % block_size_;
      cache.write(layer, {copy.device_blocks[p / block_size_], slot}, row(keys_, host, layer, slot),
                  row(values_, host, layer, slot));
    }
  return (copy.positions - copy.first) * bytes_per_position();
}
//! [swap_copy]

}  // namespace book::serve
