// The reference kv.prefix_hash: splitmix64's finaliser folded over the tokens, chained through
// the parent's hash.
#include "chapters/10_paged_attention/prefix_hash.h"

#include "chapters/10_paged_attention/kv_shape.h"

namespace book::kv {
namespace {

// splitmix64's output function: every input bit flips about half of the output bits.
std::uint64_t mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace

//! [hash_block]
std::uint64_t hash_block(std::uint64_t parent, std::span<const int> block_tokens) {
  std::uint64_t h = mix(parent);
  for (const int token : block_tokens)
    h = mix(h ^ (static_cast<std::uint32_t>(token) + 0x9e3779b97f4a7c15ULL));
  return mix(h ^ block_tokens.size());  // the count too: [1] and [1, 0] must differ
}

std::vector<std::uint64_t> prefix_block_hashes(std::span<const int> tokens, int block_size) {
  check_block_size("prefix_block_hashes", block_size);
  std::vector<std::uint64_t> hashes;
  std::uint64_t parent = kRootPrefixHash;
  for (std::size_t start = 0; start + block_size <= tokens.size(); start += block_size)
    hashes.push_back(parent = hash_block(parent, tokens.subspan(start, block_size)));
  return hashes;
}
//! [hash_block]

}  // namespace book::kv
