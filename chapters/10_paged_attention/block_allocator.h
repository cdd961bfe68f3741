/// @file
/// The physical blocks of a paged KV cache: reference counts and one free queue.
///
/// A block holds the keys and values of `block_size` consecutive tokens of one sequence, in every
/// layer. The allocator does not know what is in a block; it knows how many block tables point at
/// it (its reference count) and which blocks nobody points at (the free queue). Sharing a block
/// between sequences (a fork, a cached prefix) is one more reference, not a copy.
#pragma once

#include <optional>
#include <vector>

namespace book::kv {

/// Index of a physical block in the KV cache's pool, 0 .. num_blocks-1.
using BlockId = int;

/// Exercise kv.block_allocator: a pool of `num_blocks` blocks with reference counts and a free
/// queue that doubles as the prefix cache's LRU list.
///
/// The free queue holds exactly the blocks whose count is 0. allocate() takes the block at its
/// front. A block whose count drops to 0 joins the queue at the **back** if it still holds
/// cached content (a full block the prefix cache can hand out again), so the cached block freed
/// longest ago is the first to be reused (evicted): least recently used. A block with nothing
/// worth keeping joins at the **front**, so plain blocks are reused before any cached block is
/// evicted. A prefix-cache hit on a free cached block takes it out of the middle of the queue
/// (retain), hence a doubly linked list over block ids: every operation is O(1).
///
/// Running out is a normal event, not an error: allocate() returns no block and changes nothing,
/// and the caller (chapter 11's scheduler) preempts a sequence. Misuse is an error: a block id
/// outside the pool, or releasing a block whose count is already 0 (a double free), throws
/// book::Error and changes nothing.
/// \exercise{kv.block_allocator}
class BlockAllocator {
 public:
  /// `num_blocks` free blocks, queued 0, 1, ..., num_blocks-1 from the front. Throws book::Error
  /// if num_blocks < 1.
  explicit BlockAllocator(int num_blocks);

  /// Takes the block at the front of the free queue and sets its count to 1; no block (and no
  /// change) when the queue is empty.
  std::optional<BlockId> allocate();
  /// Adds one reference to `block` (a fork, a prefix-cache hit). A free block (count 0, a cached
  /// block waiting in the queue) is taken out of the queue, wherever it is, and gets count 1.
  void retain(BlockId block);
  /// Drops one reference; returns the new count. At 0 the block joins the free queue, at the back
  /// when `keep_cached` (its content may be reused: LRU), at the front otherwise. Throws
  /// book::Error ("double free") if the count is already 0.
  int release(BlockId block, bool keep_cached = false);

  /// References to `block` (0: it is free).
  int ref_count(BlockId block) const;
  /// Blocks in the pool.
  int num_blocks() const;
  /// Blocks in the free queue (count 0).
  int num_free() const;
  /// The free queue, front (next to be allocated) to back.
  std::vector<BlockId> free_queue() const;

 private:
  std::vector<int> ref_count_;  // per block
  std::vector<BlockId> prev_;   // the free queue as a doubly linked list: -1 = none
  std::vector<BlockId> next_;
  BlockId front_ = -1;
  BlockId back_ = -1;
  int num_free_ = 0;
};

}  // namespace book::kv
