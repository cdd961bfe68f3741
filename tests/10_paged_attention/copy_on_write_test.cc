// Graded tests of kv.copy_on_write (reserve_slot): a new block every B tokens, in-place writes to
// an exclusive last block, a copy before writing a shared one, and nothing changed when the pool
// is out of blocks.
#include <gtest/gtest.h>

#include <vector>

#include "chapters/10_paged_attention/copy_on_write.h"
#include "chapters/10_paged_attention/kv_shape.h"
#include "common/testing/exercise.h"
#include "common/testing/expect_error.h"

namespace book::kv {
namespace {

using book::testing::expect_error;

EXERCISE_TEST("kv.copy_on_write", ReserveSlot, AllocatesANewBlockEveryBlockSizeTokens) {
  for (const int bs : {1, 16, 7}) {
    BlockAllocator pool(64);
    BlockTable table;
    for (int length = 0; length < 50; ++length) {
      const SlotReservation r = reserve_slot(pool, table, length, bs);
      ASSERT_TRUE(r.ok) << "block size " << bs << ", token " << length;
      EXPECT_EQ(r.slot.offset, length % bs) << "block size " << bs << ", token " << length;
      EXPECT_EQ(r.slot.block, table.back());
      EXPECT_FALSE(r.copy.has_value()) << "nothing is shared: no copy";
      EXPECT_EQ(r.fresh.has_value(), length % bs == 0)
          << "a block is allocated exactly when token " << length << " starts one";
      ASSERT_EQ(static_cast<int>(table.size()), blocks_for(length + 1, bs))
          << "⌈" << length + 1 << "/" << bs << "⌉ blocks";
    }
    EXPECT_EQ(pool.num_free(), 64 - blocks_for(50, bs)) << "block size " << bs;
  }
}

EXERCISE_TEST("kv.copy_on_write", ReserveSlot, CopiesASharedLastBlockBeforeWriting) {
  const int bs = 4;
  BlockAllocator pool(8);
  BlockTable parent;
  for (int length = 0; length < 6; ++length) reserve_slot(pool, parent, length, bs);  // 6 tokens
  BlockTable child = parent;  // a fork: every block gets a second reference
  for (const BlockId b : child) pool.retain(b);
  const BlockId shared = parent.back();

  const SlotReservation r = reserve_slot(pool, child, 6, bs);
  ASSERT_TRUE(r.ok);
  ASSERT_TRUE(r.copy.has_value()) << "the child's last block is shared: it must be copied";
  EXPECT_EQ(r.copy->source, shared);
  EXPECT_NE(r.copy->destination, shared);
  EXPECT_EQ(r.copy->tokens, 2) << "positions 4 and 5 are filled in the shared block";
  EXPECT_EQ(r.fresh, r.copy->destination);
  EXPECT_EQ(r.slot.block, r.copy->destination)
      << "the write goes to the copy, never the shared block";
  EXPECT_EQ(r.slot.offset, 2);
  EXPECT_EQ(child.back(), r.copy->destination);
  EXPECT_EQ(child.front(), parent.front()) << "the full first block stays shared";
  EXPECT_EQ(pool.ref_count(shared), 1) << "the child dropped its reference to the shared block";
  EXPECT_EQ(pool.ref_count(child.front()), 2);

  const SlotReservation in_place = reserve_slot(pool, parent, 6, bs);
  ASSERT_TRUE(in_place.ok);
  EXPECT_FALSE(in_place.copy.has_value()) << "the parent is now the only owner: write in place";
  EXPECT_FALSE(in_place.fresh.has_value());
  EXPECT_EQ(in_place.slot.block, shared);
  EXPECT_EQ(in_place.slot.offset, 2);
}

EXERCISE_TEST("kv.copy_on_write", ReserveSlot, AFullSharedBlockNeedsNoCopy) {
  const int bs = 4;
  BlockAllocator pool(8);
  BlockTable parent;
  for (int length = 0; length < 8; ++length) reserve_slot(pool, parent, length, bs);  // 2 full
  BlockTable child = parent;
  for (const BlockId b : child) pool.retain(b);
  const SlotReservation r = reserve_slot(pool, child, 8, bs);
  ASSERT_TRUE(r.ok);
  EXPECT_FALSE(r.copy.has_value())
      << "token 8 starts a new block; the full shared ones are read only";
  EXPECT_EQ(child.size(), 3u);
  EXPECT_EQ(pool.ref_count(parent[1]), 2);
}

EXERCISE_TEST("kv.copy_on_write", ReserveSlot, OutOfBlocksChangesNothing) {
  const int bs = 4;
  BlockAllocator pool(2);
  BlockTable table;
  for (int length = 0; length < 8; ++length) ASSERT_TRUE(reserve_slot(pool, table, length, bs).ok);
  const BlockTable before = table;
  const SlotReservation full = reserve_slot(pool, table, 8, bs);
  EXPECT_FALSE(full.ok) << "no free block for token 8";
  EXPECT_EQ(table, before);
  EXPECT_EQ(pool.num_free(), 0);

  // Copy-on-write with no block for the copy: the shared block keeps both references.
  BlockAllocator small(2);
  BlockTable a;
  for (int length = 0; length < 6; ++length) ASSERT_TRUE(reserve_slot(small, a, length, bs).ok);
  BlockTable b = a;
  for (const BlockId id : b) small.retain(id);
  const SlotReservation cow = reserve_slot(small, b, 6, bs);
  EXPECT_FALSE(cow.ok);
  EXPECT_EQ(b, a) << "the table is unchanged";
  EXPECT_EQ(small.ref_count(a.back()), 2) << "the shared block was not released";
}

EXERCISE_TEST("kv.copy_on_write", ReserveSlot, RefusesATableThatDoesNotFitTheLength) {
  BlockAllocator pool(4);
  BlockTable table;
  reserve_slot(pool, table, 0, 4);
  expect_error([&] { reserve_slot(pool, table, 9, 4); },
               "a table of 1 blocks cannot hold 9 tokens in blocks of 4 (it needs 3)");
  expect_error([&] { reserve_slot(pool, table, 1, 0); }, "block size must be >= 1 token, got 0");
  expect_error([&] { reserve_slot(pool, table, -1, 4); }, "cannot hold -1 tokens");
}

}  // namespace
}  // namespace book::kv
