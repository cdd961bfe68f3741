// Graded tests of kv.block_allocator: the free queue's order (plain blocks at the front, cached
// blocks at the back, least recently freed first), reference counts, running out, refusals, and a
// seeded run of thousands of operations against a plain model of the same rules.
#include <gtest/gtest.h>

#include <algorithm>
#include <list>
#include <vector>

#include "chapters/10_paged_attention/block_allocator.h"
#include "common/rng.h"
#include "common/testing/exercise.h"
#include "common/testing/expect_error.h"

namespace book::kv {
namespace {

using book::testing::expect_error;

std::vector<BlockId> ids(std::initializer_list<BlockId> list) { return list; }

EXERCISE_TEST("kv.block_allocator", BlockAllocator, StartsWithEveryBlockFreeInOrder) {
  const BlockAllocator pool(5);
  EXPECT_EQ(pool.num_blocks(), 5);
  EXPECT_EQ(pool.num_free(), 5);
  EXPECT_EQ(pool.free_queue(), ids({0, 1, 2, 3, 4}));
  for (BlockId b = 0; b < 5; ++b) EXPECT_EQ(pool.ref_count(b), 0) << "block " << b;
}

EXERCISE_TEST("kv.block_allocator", BlockAllocator, AllocatesFromTheFrontUntilItRunsOut) {
  BlockAllocator pool(3);
  for (BlockId want = 0; want < 3; ++want) {
    const auto got = pool.allocate();
    ASSERT_TRUE(got.has_value()) << "allocation " << want << " of a 3-block pool failed";
    EXPECT_EQ(*got, want);
    EXPECT_EQ(pool.ref_count(*got), 1);
  }
  EXPECT_EQ(pool.num_free(), 0);
  EXPECT_FALSE(pool.allocate().has_value()) << "an empty pool must say so, not throw";
  EXPECT_EQ(pool.num_free(), 0) << "a failed allocation changes nothing";
  for (BlockId b = 0; b < 3; ++b) EXPECT_EQ(pool.ref_count(b), 1) << "block " << b;
}

EXERCISE_TEST("kv.block_allocator", BlockAllocator, CountsReferencesAndFreesAtZero) {
  BlockAllocator pool(2);
  const BlockId b = *pool.allocate();
  pool.retain(b);
  pool.retain(b);
  EXPECT_EQ(pool.ref_count(b), 3);
  EXPECT_EQ(pool.release(b), 2);
  EXPECT_EQ(pool.release(b), 1);
  EXPECT_EQ(pool.num_free(), 1) << "block " << b << " still has a reference";
  EXPECT_EQ(pool.release(b), 0);
  EXPECT_EQ(pool.num_free(), 2);
  EXPECT_EQ(pool.free_queue(), ids({0, 1})) << "a plain freed block goes to the front";
}

EXERCISE_TEST("kv.block_allocator", BlockAllocator, CachedBlocksQueueAtTheBackPlainAtTheFront) {
  BlockAllocator pool(4);
  for (int i = 0; i < 4; ++i) pool.allocate();
  pool.release(2, /*keep_cached=*/true);
  pool.release(0, false);
  pool.release(3, true);
  pool.release(1, false);
  EXPECT_EQ(pool.free_queue(), ids({1, 0, 2, 3}))
      << "plain blocks (1, 0: last freed first) before cached ones (2 then 3: least recently "
         "freed first)";
  std::vector<BlockId> order;
  while (const auto b = pool.allocate()) order.push_back(*b);
  EXPECT_EQ(order, ids({1, 0, 2, 3})) << "allocation follows the queue: cached block 2 is evicted "
                                         "before 3 (LRU)";
}

EXERCISE_TEST("kv.block_allocator", BlockAllocator, RetainTakesAFreeBlockOutOfTheMiddle) {
  BlockAllocator pool(4);
  for (int i = 0; i < 4; ++i) pool.allocate();
  for (BlockId b : {0, 1, 2, 3}) pool.release(b, true);  // queue 0 1 2 3
  pool.retain(2);                                        // a prefix-cache hit on free block 2
  EXPECT_EQ(pool.ref_count(2), 1);
  EXPECT_EQ(pool.free_queue(), ids({0, 1, 3}));
  EXPECT_EQ(pool.num_free(), 3);
  pool.retain(0);  // the front
  pool.retain(3);  // the back
  EXPECT_EQ(pool.free_queue(), ids({1}));
  EXPECT_EQ(*pool.allocate(), 1);
  EXPECT_FALSE(pool.allocate().has_value());
}

EXERCISE_TEST("kv.block_allocator", BlockAllocator, RefusesDoubleFreesAndForeignBlocks) {
  BlockAllocator pool(4);
  const BlockId b = *pool.allocate();
  pool.release(b);
  expect_error([&] { pool.release(b); }, "double free of block 0");
  EXPECT_EQ(pool.num_free(), 4) << "a refused release changes nothing";
  EXPECT_EQ(pool.free_queue(), ids({0, 1, 2, 3}));
  expect_error([&] { pool.retain(9); }, "block 9 is not in the pool 0..3");
  expect_error([&] { pool.release(-1); }, "block -1 is not in the pool 0..3");
  expect_error([&] { (void)pool.ref_count(4); }, "block 4 is not in the pool 0..3");
  expect_error([] { BlockAllocator none(0); }, "at least 1 block, got 0");
}

// The same rules written the obvious way (a std::list as the queue), run side by side with the
// allocator over thousands of seeded operations.
struct ModelAllocator {
  std::vector<int> counts;
  std::list<BlockId> queue;
  explicit ModelAllocator(int n) : counts(n, 0) {
    for (BlockId b = 0; b < n; ++b) queue.push_back(b);
  }
};

EXERCISE_TEST("kv.block_allocator", BlockAllocator, AgreesWithAPlainModelOverThousandsOfSteps) {
  for (const int n : {1, 3, 16}) {
    BlockAllocator pool(n);
    ModelAllocator model(n);
    Rng rng(100 + n);
    for (int step = 0; step < 5000; ++step) {
      const int op = static_cast<int>(rng.uniform_int(0, 3));
      const BlockId b = static_cast<BlockId>(rng.uniform_int(0, n - 1));
      if (op == 0) {
        const auto got = pool.allocate();
        if (model.queue.empty()) {
          ASSERT_FALSE(got.has_value()) << "step " << step << ": the pool should be empty";
        } else {
          ASSERT_TRUE(got.has_value()) << "step " << step;
          ASSERT_EQ(*got, model.queue.front())
              << "step " << step << ": allocate took the wrong block";
          model.counts[*got] = 1;
          model.queue.pop_front();
        }
      } else if (op == 1) {
        pool.retain(b);
        if (model.counts[b]++ == 0) model.queue.remove(b);
      } else if (model.counts[b] > 0) {
        const bool cached = op == 3;
        ASSERT_EQ(pool.release(b, cached), model.counts[b] - 1) << "step " << step;
        if (--model.counts[b] == 0) {
          if (cached)
            model.queue.push_back(b);
          else
            model.queue.push_front(b);
        }
      }
      const std::vector<BlockId> want(model.queue.begin(), model.queue.end());
      ASSERT_EQ(pool.free_queue(), want) << "step " << step << " (pool of " << n << ")";
      ASSERT_EQ(pool.num_free(), static_cast<int>(want.size())) << "step " << step;
      for (BlockId c = 0; c < n; ++c)
        ASSERT_EQ(pool.ref_count(c), model.counts[c]) << "step " << step << ", block " << c;
    }
  }
}

}  // namespace
}  // namespace book::kv
