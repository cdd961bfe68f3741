// Exercise pd.kv_transfer: a sequence's keys and values packed from one paged cache and rebuilt in
// another whose block table holds other block ids, bit for bit, and nothing else touched.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "chapters/13_disaggregation_speculation/pd/kv_transfer.h"
#include "common/rng.h"
#include "common/testing/exercise.h"
#include "common/testing/expect_error.h"

namespace book::pd {
namespace {

using book::testing::expect_error;

const kv::KvShape kShape{3, 2, 5};  // awkward on purpose: no size is a power of two

// A cache whose every number is fresh and random (never zero), so a misplaced copy shows.
void fill_random(kv::PagedKvCache& cache, std::uint64_t seed) {
  Rng rng(seed);
  const int row = cache.shape().numbers_per_layer_token();
  std::vector<float> k(row), v(row);
  for (int layer = 0; layer < cache.shape().n_layer; ++layer)
    for (int b = 0; b < cache.num_blocks(); ++b)
      for (int s = 0; s < cache.block_size(); ++s) {
        for (int i = 0; i < row; ++i)
          k[i] = static_cast<float>(rng.uniform(0.5, 1.5)),
          v[i] = static_cast<float>(rng.uniform(-1.5, -0.5));
        cache.write(layer, {b, s}, k.data(), v.data());
      }
}

// Key (or value) number d of head h at position p of the sequence with `table`.
float at(const kv::PagedKvCache& cache, std::span<const kv::BlockId> table, int layer, bool value,
         int p, int h, int d) {
  const kv::LayerKvView view = cache.layer(layer);
  const float* pool = value ? view.values : view.keys;
  return pool[view.offset(table[p / cache.block_size()], h, p % cache.block_size()) + d];
}

EXERCISE_TEST("pd.kv_transfer", KvTransfer, PacksEveryPositionInTheDocumentedLayout) {
  kv::PagedKvCache sender(kShape, 9, 4);
  fill_random(sender, 1);
  const std::vector<kv::BlockId> table{7, 2, 5, 0};  // scattered, as a real pool leaves them
  const int tokens = 13;                             // the last block is partly used
  const KvPacket packet = pack_kv(sender, table, tokens);
  EXPECT_EQ(packet.header, (KvTransferHeader{3, 2, 5, 13}));
  ASSERT_EQ(static_cast<std::int64_t>(packet.data.size()), 2 * 3 * 2 * 5 * tokens)
      << "exactly 2 · layers · heads · head_dim · tokens numbers, no padding, no header";
  std::size_t i = 0;
  for (int layer = 0; layer < 3; ++layer)
    for (const bool value : {false, true})
      for (int p = 0; p < tokens; ++p)
        for (int h = 0; h < 2; ++h)
          for (int d = 0; d < 5; ++d, ++i)
            ASSERT_EQ(packet.data[i], at(sender, table, layer, value, p, h, d))
                << "element " << i << ": layer " << layer << (value ? " values" : " keys")
                << ", position " << p << ", head " << h << ", number " << d
                << " (layout [layer][K then V][token][head][head_dim])";
}

EXERCISE_TEST("pd.kv_transfer", KvTransfer, RebuildsThroughTheReceiversOwnBlockTable) {
  kv::PagedKvCache sender(kShape, 9, 4);
  fill_random(sender, 2);
  const std::vector<kv::BlockId> sent_from{3, 8, 1, 6};
  kv::PagedKvCache receiver(kShape, 6, 4);
  receiver.poison();
  const std::vector<kv::BlockId> received_into{4, 0, 5, 2};
  const int tokens = 14;
  unpack_kv(pack_kv(sender, sent_from, tokens), receiver, received_into);
  for (int layer = 0; layer < 3; ++layer)
    for (const bool value : {false, true})
      for (int p = 0; p < tokens; ++p)
        for (int h = 0; h < 2; ++h)
          for (int d = 0; d < 5; ++d)
            ASSERT_EQ(at(receiver, received_into, layer, value, p, h, d),
                      at(sender, sent_from, layer, value, p, h, d))
                << "layer " << layer << (value ? " values" : " keys") << ", position " << p
                << ", head " << h << ", number " << d;
  // Nothing outside the sequence's positions was written: block 1, 3 and slots 14, 15 stay NaN.
  for (const int p : {14, 15})
    EXPECT_TRUE(std::isnan(at(receiver, received_into, 0, false, p, 0, 0))) << "slot " << p;
  for (const kv::BlockId b : {1, 3})
    EXPECT_TRUE(std::isnan(receiver.layer(2).values[receiver.layer(2).offset(b, 1, 3)]))
        << "block " << b << " belongs to nobody";
}

EXERCISE_TEST("pd.kv_transfer", KvTransfer, AReceiverPrefixHitKeepsItsOwnPositions) {
  kv::PagedKvCache sender(kShape, 4, 4);
  fill_random(sender, 3);
  kv::PagedKvCache receiver(kShape, 4, 4);
  receiver.poison();
  const std::vector<kv::BlockId> table{0, 1, 2};
  unpack_kv(pack_kv(sender, table, 10), receiver, table, /*first=*/8);
  EXPECT_TRUE(std::isnan(at(receiver, table, 1, true, 7, 1, 4)))
      << "position 7 is before first = 8: the receiver already had it, it must not be rewritten";
  EXPECT_EQ(at(receiver, table, 1, true, 9, 1, 4), at(sender, table, 1, true, 9, 1, 4));
}

EXERCISE_TEST("pd.kv_transfer", KvTransfer, RefusesWhatCannotBePacked) {
  kv::PagedKvCache sender(kShape, 4, 4);
  fill_random(sender, 4);
  const std::vector<kv::BlockId> two{0, 1};
  expect_error([&] { pack_kv(sender, two, 0); }, "tokens must be >= 1, got 0");
  expect_error([&] { pack_kv(sender, two, 9); }, {"2 blocks", "9 tokens"});
  KvPacket packet = pack_kv(sender, two, 8);
  kv::PagedKvCache other(kv::KvShape{3, 2, 4}, 4, 4);
  expect_error([&] { unpack_kv(packet, other, two); },
               {"3 layers × 2 heads × 5 head_dim", "3 layers × 2 heads × 4 head_dim"});
}

}  // namespace
}  // namespace book::pd
