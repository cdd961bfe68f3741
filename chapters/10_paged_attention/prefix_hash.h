/// @file
/// The names of full blocks in the prefix cache: a hash of the whole prefix up to and including
/// the block.
///
/// Two requests that start with the same system prompt compute the same keys and values for it
/// (a token's K and V depend on it and on every token before it, nothing after). So a full block
/// can be shared by any sequence whose first (i+1)·B tokens are equal, and its name must cover
/// all of them, not just its own B: the same 16 tokens after a different prefix have different K
/// and V. Chaining does it in O(B) per block: h_i = H(h_{i-1}, tokens of block i), h_{-1} = a
/// fixed root. vLLM's automatic prefix caching names blocks the same way.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace book::kv {

/// The parent hash of a sequence's first block.
inline constexpr std::uint64_t kRootPrefixHash = 0x9e3779b97f4a7c15ULL;

/// Exercise kv.prefix_hash: the hash of one block given its parent's (the prefix before it):
/// a deterministic 64-bit mix of `parent` and every token of `block_tokens`, in order, so that
/// changing the parent or any token (or the count) changes the result with near certainty.
/// \exercise{kv.prefix_hash}
std::uint64_t hash_block(std::uint64_t parent, std::span<const int> block_tokens);

/// Exercise kv.prefix_hash: the hashes of the full blocks of `tokens` in blocks of `block_size`:
/// element i is hash_block(element i-1, tokens of block i), element -1 being kRootPrefixHash.
/// A partial last block gets no hash (it is still being written). Throws book::Error if
/// block_size < 1.
/// \exercise{kv.prefix_hash}
std::vector<std::uint64_t> prefix_block_hashes(std::span<const int> tokens, int block_size);

}  // namespace book::kv
