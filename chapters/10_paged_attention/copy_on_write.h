/// @file
/// Appending one token to a sequence's block table: allocate on append, copy on write.
///
/// A block table maps a sequence's logical blocks (positions 0..B-1, B-1..2B-1, ...) to physical
/// blocks of the pool. Appending token number `length` writes slot length mod B of logical block
/// length / B. Three cases: the token starts a new block (allocate one and append it to the
/// table); it lands in the last block, which only this sequence uses (write in place); or it lands
/// in a last block another sequence shares after a fork (copy the filled slots to a fresh block,
/// point this table at the copy, drop this sequence's reference to the shared one, then write).
/// The third case is copy-on-write: a shared block is never written.
#pragma once

#include <optional>
#include <vector>

#include "chapters/10_paged_attention/block_allocator.h"

namespace book::kv {

/// A sequence's block table: entry i is the physical block holding its positions
/// [i·B, (i+1)·B), for block size B.
using BlockTable = std::vector<BlockId>;

/// Where one token's keys and values go: slot `offset` (0..B-1) of physical block `block`.
struct Slot {
  BlockId block = -1;  ///< the physical block
  int offset = 0;      ///< the slot inside it
};

/// A block copy a caller must do before writing (copy-on-write): slots [0, tokens) of every layer
/// from `source` to `destination`.
struct BlockCopy {
  BlockId source = -1;       ///< the shared block
  BlockId destination = -1;  ///< this sequence's fresh block
  int tokens = 0;            ///< filled slots to copy
};

/// What reserving one token's slot did.
struct SlotReservation {
  /// False when the pool had no free block to give: the table and the allocator are unchanged and
  /// the caller decides (chapter 11's scheduler preempts a sequence). The other fields are then
  /// meaningless.
  bool ok = false;
  Slot slot;                      ///< where the token goes
  std::optional<BlockCopy> copy;  ///< the copy to do first, if the last block was shared
  std::optional<BlockId> fresh;   ///< the block this call allocated (new or copy), if any
};

/// Exercise kv.copy_on_write: reserves the slot of token number `length` of a sequence that
/// holds `length` tokens in `table` (so table.size() must be blocks_for(length, block_size)):
/// - length a multiple of block_size: allocate a block and append it; the slot is its offset 0;
/// - otherwise, the last block with count 1: the slot is (last block, length mod block_size);
/// - otherwise (count > 1, shared): allocate a fresh block, release the shared one (this
///   sequence's reference), put the fresh one at the end of the table, and return the copy
///   {shared, fresh, length mod block_size}; the slot is (fresh, length mod block_size).
/// If an allocation fails, returns ok = false with `table` and `allocator` unchanged. Throws
/// book::Error if block_size < 1, length < 0, or the table's size does not fit `length`.
/// \exercise{kv.copy_on_write}
SlotReservation reserve_slot(BlockAllocator& allocator, BlockTable& table, int length,
                             int block_size);

}  // namespace book::kv
