// The checks of a KV transfer: scaffolding, not the exercise, so that a shape mismatch is refused
// with the same message whether the reader has written pack_kv and unpack_kv or not.
#include <sstream>

#include "chapters/13_disaggregation_speculation/pd/kv_transfer.h"
#include "common/check.h"

namespace book::pd {
namespace {

std::string describe(const kv::KvShape& s) {
  std::ostringstream out;
  out << s.n_layer << " layers × " << s.n_head << " heads × " << s.head_dim << " head_dim";
  return out.str();
}

}  // namespace

std::int64_t kv_transfer_numbers(const kv::KvShape& shape, int tokens) {
  BOOK_CHECK(tokens >= 0, "kv_transfer_numbers: tokens must be >= 0, got " << tokens);
  return shape.numbers_per_token() * tokens;
}

void check_packet(const KvPacket& packet, const kv::KvShape& shape) {
  const KvTransferHeader& h = packet.header;
  // The receiver's attention reads [head][slot][head_dim] of its own shape: numbers of another
  // shape would be read as garbage, silently, so a mismatch is refused before anything is written.
  BOOK_CHECK(h.shape() == shape,
             "KV transfer: the packet's shape "
                 << describe(h.shape()) << " differs from the receiver's cache shape "
                 << describe(shape) << "; both workers must serve the same model");
  BOOK_CHECK(h.tokens >= 1, "KV transfer: the packet has tokens = " << h.tokens << ", need >= 1");
  const std::int64_t expected = kv_transfer_numbers(h.shape(), h.tokens);
  BOOK_CHECK(static_cast<std::int64_t>(packet.data.size()) == expected,
             "KV transfer: the packet carries " << packet.data.size() << " numbers, its header ("
                                                << h.tokens << " tokens of " << describe(h.shape())
                                                << ") says " << expected);
}

void check_transfer(const KvPacket& packet, const kv::PagedKvCache& cache,
                    std::span<const kv::BlockId> table, int first) {
  check_packet(packet, cache.shape());
  const KvTransferHeader& h = packet.header;
  const std::int64_t room = static_cast<std::int64_t>(table.size()) * cache.block_size();
  BOOK_CHECK(room >= h.tokens, "KV transfer: the receiver's block table has "
                                   << table.size() << " blocks of " << cache.block_size()
                                   << " slots, too few for " << h.tokens << " tokens");
  BOOK_CHECK(first >= 0 && first <= h.tokens,
             "KV transfer: first position " << first << " is outside [0, " << h.tokens << "]");
}

}  // namespace book::pd
