// The reference kv.block_allocator: reference counts, and the free queue as a doubly linked list
// threaded through two arrays (prev_, next_), so a cached block can leave from the middle in O(1).
#include "chapters/10_paged_attention/block_allocator.h"

#include "common/check.h"

namespace book::kv {
namespace {

void check_id(const char* who, BlockId block, int num_blocks) {
  BOOK_CHECK(block >= 0 && block < num_blocks, "BlockAllocator::" << who << ": block " << block
                                                                  << " is not in the pool 0.."
                                                                  << num_blocks - 1);
}

}  // namespace

BlockAllocator::BlockAllocator(int num_blocks) {
  BOOK_CHECK(num_blocks >= 1, "BlockAllocator: the pool needs at least 1 block, got "
                                  << num_blocks << " (is the KV budget smaller than one block?)");
  ref_count_.assign(num_blocks, 0);
  prev_.resize(num_blocks);
  next_.resize(num_blocks);
  for (BlockId b = 0; b < num_blocks; ++b) {
    prev_[b] = b - 1;
    next_[b] = b + 1 < num_blocks ? b + 1 : -1;
  }
  front_ = 0;
  back_ = num_blocks - 1;
  num_free_ = num_blocks;
}

std::optional<BlockId> BlockAllocator::allocate() {
  if (front_ < 0) return std::nullopt;
  const BlockId block = front_;
  retain(block);  // unlinks the front and sets the count to 1
  return block;
}

void BlockAllocator::retain(BlockId block) {
  check_id("retain", block, num_blocks());
  if (ref_count_[block]++ > 0) return;
  // A free block: unlink it from wherever it sits in the queue.
  (prev_[block] >= 0 ? next_[prev_[block]] : front_) = next_[block];
  (next_[block] >= 0 ? prev_[next_[block]] : back_) = prev_[block];
  prev_[block] = next_[block] = -1;
  --num_free_;
}

int BlockAllocator::release(BlockId block, bool keep_cached) {
  check_id("release", block, num_blocks());
  BOOK_CHECK(ref_count_[block] > 0, "BlockAllocator::release: double free of block "
                                        << block << " (its reference count is already 0)");
  if (--ref_count_[block] > 0) return ref_count_[block];
  if (keep_cached) {  // the back: evicted last, least recently used first
    prev_[block] = back_;
    next_[block] = -1;
    (back_ >= 0 ? next_[back_] : front_) = block;
    back_ = block;
  } else {  // the front: reused before any cached block
    prev_[block] = -1;
    next_[block] = front_;
    (front_ >= 0 ? prev_[front_] : back_) = block;
    front_ = block;
  }
  ++num_free_;
  return 0;
}

int BlockAllocator::ref_count(BlockId block) const {
  check_id("ref_count", block, num_blocks());
  return ref_count_[block];
}

int BlockAllocator::num_blocks() const { return static_cast<int>(ref_count_.size()); }

int BlockAllocator::num_free() const { return num_free_; }

std::vector<BlockId> BlockAllocator::free_queue() const {
  std::vector<BlockId> queue;
  for (BlockId b = front_; b >= 0; b = next_[b]) queue.push_back(b);
  return queue;
}

}  // namespace book::kv
