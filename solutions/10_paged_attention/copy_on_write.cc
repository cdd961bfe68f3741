// The reference kv.copy_on_write: allocate on append, copy a shared last block before writing.
#include "chapters/10_paged_attention/copy_on_write.h"

#include "chapters/10_paged_attention/kv_shape.h"
#include "common/check.h"

namespace book::kv {

//! [reserve_slot]
SlotReservation reserve_slot(BlockAllocator& allocator, BlockTable& table, int length,
                             int block_size) {
  check_block_size("reserve_slot", block_size);
  BOOK_CHECK(length >= 0, "reserve_slot: a sequence cannot hold " << length << " tokens");
  BOOK_CHECK(static_cast<int>(table.size()) == blocks_for(length, block_size),
             "reserve_slot: a table of " << table.size() << " blocks cannot hold " << length
                                         << " tokens in blocks of " << block_size << " (it needs "
                                         << blocks_for(length, block_size) << ")");
  SlotReservation result;
  const int offset = length % block_size;
  if (offset == 0) {  // the token starts a new logical block
    const auto block = allocator.allocate();
    if (!block) return result;
    table.push_back(*block);
    result.fresh = *block;
  } else if (allocator.ref_count(table.back()) > 1) {  // shared after a fork: copy, then write
    const auto block = allocator.allocate();
    if (!block) return result;
    result.copy = BlockCopy{table.back(), *block, offset};
    result.fresh = *block;
    allocator.release(table.back());  // the other sequences keep theirs
    table.back() = *block;
  }
  result.ok = true;
  result.slot = Slot{table.back(), offset};
  return result;
}
//! [reserve_slot]

}  // namespace book::kv
