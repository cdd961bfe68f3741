/// @file
/// The block manager: every sequence's block table over one pool of blocks, with forks that share
/// blocks (copy-on-write) and a prefix cache that shares full blocks between requests.
///
/// It is bookkeeping only: it says which physical block and slot each token's keys and values go
/// to, and which blocks to copy before a write. The numbers themselves live in a PagedKvCache
/// (kv_cache.h), and a model runner (model_runner.h) reads and writes them. Chapter 11's
/// scheduler drives it: admit a request (add_sequence), run the model, tell it what was computed
/// (mark_computed), append the sampled token (append_token), and on failure preempt.
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "chapters/10_paged_attention/block_allocator.h"
#include "chapters/10_paged_attention/copy_on_write.h"

namespace book::kv {

/// A sequence's name, chosen by the caller (chapter 11: the request id, or one per sample).
using SequenceId = std::int64_t;

/// What admitting a sequence did.
struct Admission {
  /// False when the pool lacks the blocks: nothing changed (the caller keeps the request waiting).
  bool ok = false;
  /// Prompt tokens whose keys and values are already in the cache (prefix-cache hits, whole
  /// blocks): the model runs positions [cached_tokens, prompt length) only.
  int cached_tokens = 0;
};

/// Counters of the prefix cache since the manager was made.
struct PrefixCacheStats {
  std::int64_t queried_blocks = 0;  ///< full prompt blocks looked up
  std::int64_t hit_blocks = 0;      ///< of those, found in the cache
  std::int64_t evicted_blocks = 0;  ///< cached blocks whose content was dropped for reuse
};

/// Every sequence's block table over one pool; see the file comment.
///
/// Invariants (check_invariants() verifies them all): a block's reference count equals the
/// number of block tables that hold it; the free queue is exactly the blocks with count 0; a
/// sequence of n tokens has ⌈n / B⌉ blocks, so its last block wastes fewer than B slots; a block
/// that another table shares is never handed out for writing (append_token copies it first); a
/// block named in the prefix cache holds the tokens its hash names.
class BlockManager {
 public:
  /// A pool of `num_blocks` blocks of `block_size` token slots; prefix caching on or off. Throws
  /// book::Error if num_blocks < 1 or block_size < 1.
  BlockManager(int num_blocks, int block_size = 16, bool prefix_caching = true);

  /// Blocks the prompt would take from the free queue if admitted now (the prefix-cache hits on
  /// blocks in use cost nothing; hits on free cached blocks do take a block out of the queue).
  int blocks_needed(std::span<const int> prompt) const;
  /// Admits sequence `id` with its prompt: reuses the longest run of full prompt blocks found in
  /// the prefix cache (never the block holding the last prompt token, whose logits must be
  /// computed), allocates the rest. Returns ok = false and changes nothing if the free queue is
  /// too short. Throws book::Error if `id` is already here or the prompt is empty.
  Admission add_sequence(SequenceId id, std::span<const int> prompt);
  /// Says that the keys and values of positions [0, tokens) of `id` are now written (after a
  /// model step): its full blocks among them become prefix-cache entries. Throws book::Error if
  /// `id` is unknown or tokens exceeds its length.
  void mark_computed(SequenceId id, int tokens);
  /// Appends `token` to `id`: reserves its slot (a new block every B tokens; copy-on-write if the
  /// last block is shared). On ok = false nothing changed (out of blocks: preempt something).
  /// The caller copies `copy` (if any) in the KV cache, then writes the token's K and V at `slot`
  /// when the model runs it. Throws book::Error if `id` is unknown.
  SlotReservation append_token(SequenceId id, int token);
  /// Whether append_token(id, ...) would succeed now.
  bool can_append(SequenceId id) const;
  /// Makes `child` a copy of `parent` that shares every block (parallel sampling, beam search):
  /// each block's count goes up by one; nothing is copied until one of them writes a shared
  /// block. Throws book::Error if `parent` is unknown or `child` exists.
  void fork(SequenceId parent, SequenceId child);
  /// Drops sequence `id`: each of its blocks loses a reference, and a block left with none joins
  /// the free queue (at the back if the prefix cache names it). Throws book::Error if `id` is
  /// unknown (freeing twice included).
  void free(SequenceId id);
  /// Shortens `id` to its first `length` tokens: speculative decoding's rollback of rejected draft
  /// tokens (chapter 13). Blocks past ⌈length / B⌉ lose this sequence's reference (a block left
  /// with none joins the free queue); positions from `length` on count as not computed; a last
  /// block that becomes partial and is held by this sequence alone leaves the prefix cache (its
  /// slots will be written again). Throws book::Error if `id` is unknown or length is not in
  /// [1, length(id)].
  void truncate(SequenceId id, int length);
  /// Forgets the content of up to `max_blocks` free cached blocks, least recently used first
  /// (they stay free, now plain). Returns how many were dropped.
  int evict_cached(int max_blocks);

  /// Whether sequence `id` is here.
  bool contains(SequenceId id) const;
  /// The block table of `id` (throws book::Error if unknown).
  const BlockTable& block_table(SequenceId id) const;
  /// The tokens of `id` (prompt and appended), in order.
  std::span<const int> tokens(SequenceId id) const;
  /// Tokens of `id`.
  int length(SequenceId id) const;
  /// Positions of `id` whose keys and values are written (mark_computed; prefix hits count).
  int computed(SequenceId id) const;
  /// The ids of every sequence here, in no particular order.
  std::vector<SequenceId> sequences() const;

  int block_size() const { return block_size_; }                            ///< B
  int num_blocks() const { return allocator_.num_blocks(); }                ///< pool size
  int num_free_blocks() const { return allocator_.num_free(); }             ///< count-0 blocks
  int num_used_blocks() const { return num_blocks() - num_free_blocks(); }  ///< count > 0
  /// Blocks the prefix cache names (in use or free).
  int num_cached_blocks() const { return static_cast<int>(cache_.size()); }
  /// References to block `block` (for tests and pictures).
  int ref_count(BlockId block) const { return allocator_.ref_count(block); }
  /// Σ over sequences of their table sizes: the blocks they would hold without any sharing.
  std::int64_t logical_blocks() const;
  /// Σ over sequences of their lengths: tokens whose K/V the sequences read.
  std::int64_t logical_tokens() const;
  /// The prefix cache's counters.
  const PrefixCacheStats& prefix_stats() const { return stats_; }
  /// The free queue, front to back (see BlockAllocator).
  std::vector<BlockId> free_queue() const { return allocator_.free_queue(); }

  /// Recomputes every invariant in the class comment from scratch; throws book::Error naming the
  /// first one that fails. O(blocks + tokens): for tests and the fuzzer.
  void check_invariants() const;

 private:
  struct Sequence {
    std::vector<int> tokens;
    BlockTable table;
    int computed = 0;                   // positions whose K/V are written
    std::vector<std::uint64_t> hashes;  // prefix hashes of its leading computed full blocks
  };
  struct CachedBlock {  // what a named block holds, to confirm a hit token by token
    std::uint64_t hash = 0;
    std::uint64_t parent = 0;
    std::vector<int> tokens;
  };

  Sequence& find(SequenceId id, const char* who);
  const Sequence& find(SequenceId id, const char* who) const;
  // The cached block named `hash` if it holds `tokens` after `parent`, else -1.
  BlockId lookup(std::uint64_t hash, std::uint64_t parent, std::span<const int> tokens) const;
  // The prompt's cached leading blocks; `hashes` gets the hashes of the blocks it looked up.
  std::vector<BlockId> cached_prefix(std::span<const int> prompt,
                                     std::vector<std::uint64_t>& hashes) const;
  // A block just taken from the free queue may still carry a cache entry: drop it (eviction).
  void forget_if_cached(BlockId block);
  void publish_full_blocks(Sequence& sequence);

  int block_size_;
  bool prefix_caching_;
  BlockAllocator allocator_;
  std::unordered_map<SequenceId, Sequence> sequences_;
  std::unordered_map<std::uint64_t, BlockId> cache_;  // prefix hash -> block
  std::unordered_map<BlockId, CachedBlock> cached_;   // block -> what it holds
  PrefixCacheStats stats_;
};

}  // namespace book::kv
