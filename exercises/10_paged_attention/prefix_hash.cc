// Exercise kv.prefix_hash: write hash_block and prefix_block_hashes of
// chapters/10_paged_attention/prefix_hash.h.
//
// - hash_block(parent, tokens): a deterministic 64-bit mix of the parent hash and every token, in
//   order (and of their count), such that a different parent or any different token gives a
//   different hash with near certainty. Fold a good 64-bit mixer (splitmix64's finaliser, say)
//   over the tokens, starting from the parent.
// - prefix_block_hashes(tokens, block_size): one hash per *full* block, each chained from the
//   previous one (the first from kRootPrefixHash), so block i's hash names the whole prefix
//   tokens[0, (i+1)·block_size). No hash for a partial last block. block_size < 1 is a
//   book::Error (check_block_size in kv_shape.h).
// Test: bazel test --config=exercises //tests/10_paged_attention:prefix_hash_test
#include "chapters/10_paged_attention/prefix_hash.h"

#include "common/check.h"

namespace book::kv {
namespace {
constexpr const char* kFile = "exercises/10_paged_attention/prefix_hash.cc";
constexpr const char* kSection = "chapters/10_paged_attention/README.md, section Prefix caching";
}  // namespace

std::uint64_t hash_block(std::uint64_t parent, std::span<const int> block_tokens) {
  (void)parent, (void)block_tokens;
  BOOK_NOT_IMPLEMENTED("kv.prefix_hash", kFile, kSection);
}

std::vector<std::uint64_t> prefix_block_hashes(std::span<const int> tokens, int block_size) {
  (void)tokens, (void)block_size;
  BOOK_NOT_IMPLEMENTED("kv.prefix_hash", kFile, kSection);
}

}  // namespace book::kv
