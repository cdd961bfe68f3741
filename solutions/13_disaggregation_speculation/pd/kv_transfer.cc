// Reference for exercise pd.kv_transfer: gather by position on the sender, scatter by position
// on the receiver. The two block tables never meet: only positions travel.
#include "chapters/13_disaggregation_speculation/pd/kv_transfer.h"

#include <algorithm>

#include "common/check.h"

namespace book::pd {

//! [pack_kv]
KvPacket pack_kv(const kv::PagedKvCache& cache, std::span<const kv::BlockId> table, int tokens) {
  const int block_size = cache.block_size();
  BOOK_CHECK(tokens >= 1, "pack_kv: tokens must be >= 1, got " << tokens);
  BOOK_CHECK(static_cast<std::int64_t>(table.size()) * block_size >= tokens,
             "pack_kv: a block table of " << table.size() << " blocks of " << block_size
                                          << " slots cannot hold " << tokens << " tokens");
  const kv::KvShape& shape = cache.shape();
  KvPacket packet;
  packet.header = {shape.n_layer, shape.n_head, shape.head_dim, tokens};
  packet.data.resize(static_cast<std::size_t>(kv_transfer_numbers(shape, tokens)));
  float* out = packet.data.data();
  for (int layer = 0; layer < shape.n_layer; ++layer) {
    const kv::LayerKvView view = cache.layer(layer);
    for (const float* pool : {view.keys, view.values})
      for (int p = 0; p < tokens; ++p)
        for (int h = 0; h < shape.n_head; ++h) {
          // One head's vector of one position is contiguous in the pool: copy it whole.
          const float* from = pool + view.offset(table[p / block_size], h, p % block_size);
          out = std::copy_n(from, shape.head_dim, out);
        }
  }
  return packet;
}
//! [pack_kv]

void unpack_kv(const KvPacket& packet, kv::PagedKvCache& cache, std::span<const kv::BlockId> table,
               int first) {
  check_transfer(packet, cache, table, first);
  const kv::KvShape& shape = cache.shape();
  const int tokens = packet.header.tokens;
  const std::size_t row = static_cast<std::size_t>(shape.numbers_per_layer_token());
  // The packet holds, per layer, all keys then all values; write() takes one position's keys and
  // values together, so read the two runs side by side.
  for (int layer = 0; layer < shape.n_layer; ++layer) {
    const float* keys = packet.data.data() + static_cast<std::size_t>(layer) * 2 * tokens * row;
    const float* values = keys + static_cast<std::size_t>(tokens) * row;
    for (int p = first; p < tokens; ++p)
      cache.write(layer, {table[p / cache.block_size()], p % cache.block_size()}, keys + p * row,
                  values + p * row);
  }
}

}  // namespace book::pd
