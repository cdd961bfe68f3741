// Exercise kv.block_allocator: write the BlockAllocator of chapters/10_paged_attention/
// block_allocator.h.
//
// - The constructor: every block free, with count 0, queued 0, 1, ..., n-1 from the front;
//   fewer than 1 block is a book::Error.
// - allocate(): the block at the front of the free queue, now with count 1; std::nullopt (and no
//   change) when the queue is empty.
// - retain(b): count + 1; if b was free (count 0), take it out of the queue wherever it is.
// - release(b, keep_cached): count - 1 and return it; at 0 put b back in the queue, at the back
//   when keep_cached (LRU: the cached block freed longest ago is reused first), else at the front.
//   A count already 0 is a "double free": throw book::Error and change nothing.
// - A block id outside 0..n-1 is a book::Error in every method that takes one.
// Keep every operation O(1): the private members are a doubly linked list over block ids.
// Test: bazel test --config=exercises //tests/10_paged_attention:block_allocator_test
#include "chapters/10_paged_attention/block_allocator.h"

#include "common/check.h"

namespace book::kv {
namespace {
constexpr const char* kFile = "exercises/10_paged_attention/block_allocator.cc";
constexpr const char* kSection =
    "chapters/10_paged_attention/README.md, section The block allocator";
}  // namespace

BlockAllocator::BlockAllocator(int num_blocks) {
  (void)num_blocks;
  BOOK_NOT_IMPLEMENTED("kv.block_allocator", kFile, kSection);
}

std::optional<BlockId> BlockAllocator::allocate() {
  BOOK_NOT_IMPLEMENTED("kv.block_allocator", kFile, kSection);
}

void BlockAllocator::retain(BlockId block) {
  (void)block;
  BOOK_NOT_IMPLEMENTED("kv.block_allocator", kFile, kSection);
}

int BlockAllocator::release(BlockId block, bool keep_cached) {
  (void)block, (void)keep_cached;
  BOOK_NOT_IMPLEMENTED("kv.block_allocator", kFile, kSection);
}

int BlockAllocator::ref_count(BlockId block) const {
  (void)block;
  BOOK_NOT_IMPLEMENTED("kv.block_allocator", kFile, kSection);
}

int BlockAllocator::num_blocks() const {
  BOOK_NOT_IMPLEMENTED("kv.block_allocator", kFile, kSection);
}

int BlockAllocator::num_free() const {
  BOOK_NOT_IMPLEMENTED("kv.block_allocator", kFile, kSection);
}

std::vector<BlockId> BlockAllocator::free_queue() const {
  BOOK_NOT_IMPLEMENTED("kv.block_allocator", kFile, kSection);
}

}  // namespace book::kv
