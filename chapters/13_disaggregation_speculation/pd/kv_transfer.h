/// @file
/// Moving one prefilled sequence's keys and values from one engine's paged cache to another's.
///
/// The prefill worker's blocks are scattered over its pool (a block table of any ids), and the
/// decode worker's free blocks are other ids again: what travels is neither, but the positions
/// in order. pack_kv gathers positions [0, tokens) into one flat buffer, layer by layer, keys
/// then values, token by token, every head: exactly 2 · layers · heads · head_dim · tokens
/// numbers, nothing else (the header travels apart, so the bytes on the wire are the formula's).
/// unpack_kv scatters such a buffer into the receiver's blocks through its own block table.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "chapters/10_paged_attention/kv_cache.h"

namespace book::pd {

/// What a KV transfer carries besides the numbers: the shape they were written with and how
/// many positions. Sent as its own message of kHeaderInts int32.
struct KvTransferHeader {
  int n_layer = 0;   ///< transformer blocks
  int n_head = 0;    ///< key/value heads per block
  int head_dim = 0;  ///< numbers per head and token
  int tokens = 0;    ///< positions [0, tokens) of the sequence

  /// The cache shape the numbers were written with.
  kv::KvShape shape() const { return {n_layer, n_head, head_dim}; }
  /// Field by field.
  bool operator==(const KvTransferHeader&) const = default;
};

/// The header's size on the wire, in int32.
inline constexpr int kHeaderInts = 4;

/// One packed sequence: its header and 2 · n_layer · n_head · head_dim · tokens floats, laid out
/// [layer][K then V][token][head][head_dim].
struct KvPacket {
  KvTransferHeader header;  ///< shape and positions
  std::vector<float> data;  ///< the numbers
};

/// The numbers a transfer of `tokens` positions of `shape` carries: 2 · L · H · D · tokens.
std::int64_t kv_transfer_numbers(const kv::KvShape& shape, int tokens);

/// Exercise pd.kv_transfer (1 of 2): gathers positions [0, tokens) of the sequence whose block
/// table is `table` (position p in block table[p / B], slot p % B) from `cache` into a packet.
/// Throws book::Error if tokens < 1 or the table covers fewer than tokens positions.
KvPacket pack_kv(const kv::PagedKvCache& cache, std::span<const kv::BlockId> table, int tokens);

/// Exercise pd.kv_transfer (2 of 2): writes positions [first, packet.header.tokens) of `packet`
/// into `cache` through the receiver's `table` (positions before `first` are already there: a
/// prefix-cache hit on the receiver). Throws book::Error (check_transfer) if the packet's shape
/// differs from the cache's, its data has the wrong count, or the table is too short.
void unpack_kv(const KvPacket& packet, kv::PagedKvCache& cache, std::span<const kv::BlockId> table,
               int first = 0);

/// Throws book::Error naming both shapes if the packet's shape is not `shape`, and naming the
/// counts if its data does not hold kv_transfer_numbers of its header (or tokens < 1).
void check_packet(const KvPacket& packet, const kv::KvShape& shape);

/// The checks unpack_kv starts with, apart so that they hold whatever the exercise's state:
/// check_packet against the cache's shape, then naming the blocks if `table` covers
/// fewer than header.tokens positions, or `first` is outside [0, tokens].
void check_transfer(const KvPacket& packet, const kv::PagedKvCache& cache,
                    std::span<const kv::BlockId> table, int first);

}  // namespace book::pd
