// Exercise kv.copy_on_write: write reserve_slot of chapters/10_paged_attention/copy_on_write.h.
//
// The table holds `length` tokens; reserve the slot of token number `length`:
// - length % block_size == 0: allocate a block, append it to the table; slot (it, 0);
// - the last block's reference count is 1: slot (last block, length % block_size);
// - it is shared (count > 1): allocate a fresh block, release the shared one, replace the last
//   entry with the fresh one, and return the copy {shared, fresh, length % block_size} so the
//   caller copies the filled slots before writing; slot (fresh, length % block_size).
// Fill `fresh` with the block you allocated. When allocate() gives nothing, return ok = false
// and leave the table and the allocator exactly as they were (allocate before you release).
// Refuse (book::Error) a block size < 1, a negative length, or a table whose size is not
// blocks_for(length, block_size) (kv_shape.h).
// Test: bazel test --config=exercises //tests/10_paged_attention:copy_on_write_test
#include "chapters/10_paged_attention/copy_on_write.h"

#include "common/check.h"

namespace book::kv {

SlotReservation reserve_slot(BlockAllocator& allocator, BlockTable& table, int length,
                             int block_size) {
  (void)allocator, (void)table, (void)length, (void)block_size;
  BOOK_NOT_IMPLEMENTED("kv.copy_on_write", "exercises/10_paged_attention/copy_on_write.cc",
                       "chapters/10_paged_attention/README.md, section Copy-on-write");
}

}  // namespace book::kv
