#include "chapters/10_paged_attention/block_manager.h"

#include <algorithm>
#include <map>
#include <set>

#include "chapters/10_paged_attention/kv_shape.h"
#include "chapters/10_paged_attention/prefix_hash.h"
#include "common/check.h"

namespace book::kv {
namespace {

std::span<const int> block_tokens(std::span<const int> tokens, int block, int block_size) {
  return tokens.subspan(static_cast<std::size_t>(block) * block_size, block_size);
}

}  // namespace

BlockManager::BlockManager(int num_blocks, int block_size, bool prefix_caching)
    : block_size_((check_block_size("BlockManager", block_size), block_size)),
      prefix_caching_(prefix_caching),
      allocator_(num_blocks) {}

BlockManager::Sequence& BlockManager::find(SequenceId id, const char* who) {
  const auto it = sequences_.find(id);
  BOOK_CHECK(it != sequences_.end(), "BlockManager::" << who << ": unknown sequence " << id
                                                      << " (never added, or already freed)");
  return it->second;
}

const BlockManager::Sequence& BlockManager::find(SequenceId id, const char* who) const {
  return const_cast<BlockManager*>(this)->find(id, who);
}

BlockId BlockManager::lookup(std::uint64_t hash, std::uint64_t parent,
                             std::span<const int> tokens) const {
  const auto it = cache_.find(hash);
  if (it == cache_.end()) return -1;
  // Confirm token by token: a 64-bit collision must not hand out another prefix's K and V.
  const CachedBlock& held = cached_.at(it->second);
  if (held.parent != parent ||
      !std::equal(tokens.begin(), tokens.end(), held.tokens.begin(), held.tokens.end()))
    return -1;
  return it->second;
}

//! [prefix_lookup]
// The prompt's longest run of full blocks already in the cache, never the block that holds the
// last prompt token (its logits are what the prefill is for).
std::vector<BlockId> BlockManager::cached_prefix(std::span<const int> prompt,
                                                 std::vector<std::uint64_t>& hashes) const {
  std::vector<BlockId> hits;
  hashes.clear();
  if (!prefix_caching_) return hits;
  const int usable = (static_cast<int>(prompt.size()) - 1) / block_size_;
  hashes = prefix_block_hashes(prompt.first(static_cast<std::size_t>(usable) * block_size_),
                               block_size_);
  std::uint64_t parent = kRootPrefixHash;
  for (int i = 0; i < usable; ++i) {
    const BlockId block = lookup(hashes[i], parent, block_tokens(prompt, i, block_size_));
    if (block < 0) break;
    hits.push_back(block);
    parent = hashes[i];
  }
  return hits;
}
//! [prefix_lookup]

int BlockManager::blocks_needed(std::span<const int> prompt) const {
  std::vector<std::uint64_t> hashes;
  int needed = blocks_for(static_cast<std::int64_t>(prompt.size()), block_size_);
  for (const BlockId hit : cached_prefix(prompt, hashes))
    if (allocator_.ref_count(hit) > 0) --needed;  // in use: one more reference, no free block
  return needed;
}

Admission BlockManager::add_sequence(SequenceId id, std::span<const int> prompt) {
  BOOK_CHECK(!sequences_.contains(id),
             "BlockManager::add_sequence: sequence " << id << " already exists");
  BOOK_CHECK(!prompt.empty(),
             "BlockManager::add_sequence: sequence " << id << " has an empty prompt");
  if (blocks_needed(prompt) > allocator_.num_free()) return {};
  std::vector<std::uint64_t> hashes;
  const std::vector<BlockId> hits = cached_prefix(prompt, hashes);
  Sequence sequence;
  sequence.tokens.assign(prompt.begin(), prompt.end());
  for (const BlockId hit : hits) {
    allocator_.retain(hit);  // a free cached block leaves the queue: revived, not evicted
    sequence.table.push_back(hit);
  }
  const int total = blocks_for(static_cast<std::int64_t>(prompt.size()), block_size_);
  while (static_cast<int>(sequence.table.size()) < total) {
    const BlockId block = *allocator_.allocate();  // blocks_needed said there are enough
    forget_if_cached(block);
    sequence.table.push_back(block);
  }
  sequence.computed = static_cast<int>(hits.size()) * block_size_;
  sequence.hashes.assign(hashes.begin(), hashes.begin() + static_cast<long>(hits.size()));
  stats_.queried_blocks += static_cast<std::int64_t>(hashes.size());
  stats_.hit_blocks += static_cast<std::int64_t>(hits.size());
  sequences_.emplace(id, std::move(sequence));
  return {true, static_cast<int>(hits.size()) * block_size_};
}

void BlockManager::forget_if_cached(BlockId block) {
  const auto it = cached_.find(block);
  if (it == cached_.end()) return;
  cache_.erase(it->second.hash);
  cached_.erase(it);
  ++stats_.evicted_blocks;
}

void BlockManager::publish_full_blocks(Sequence& sequence) {
  if (!prefix_caching_) return;
  const int full = sequence.computed / block_size_;
  for (int i = static_cast<int>(sequence.hashes.size()); i < full; ++i) {
    const std::uint64_t parent = i == 0 ? kRootPrefixHash : sequence.hashes[i - 1];
    const auto tokens = block_tokens(sequence.tokens, i, block_size_);
    const std::uint64_t hash = hash_block(parent, tokens);
    sequence.hashes.push_back(hash);
    const BlockId block = sequence.table[i];
    // First come, first named: a second block with the same content (two requests computed the
    // same prefix at once) stays unnamed and is freed as a plain block.
    if (cache_.contains(hash) || cached_.contains(block)) continue;
    cache_.emplace(hash, block);
    cached_.emplace(block, CachedBlock{hash, parent, {tokens.begin(), tokens.end()}});
  }
}

void BlockManager::mark_computed(SequenceId id, int tokens) {
  Sequence& sequence = find(id, "mark_computed");
  BOOK_CHECK(tokens >= sequence.computed && tokens <= static_cast<int>(sequence.tokens.size()),
             "BlockManager::mark_computed: sequence " << id << " has " << sequence.tokens.size()
                                                      << " tokens, " << sequence.computed
                                                      << " computed; cannot mark " << tokens);
  sequence.computed = tokens;
  publish_full_blocks(sequence);
}

//! [append_token]
SlotReservation BlockManager::append_token(SequenceId id, int token) {
  Sequence& sequence = find(id, "append_token");
  const int length = static_cast<int>(sequence.tokens.size());
  SlotReservation reservation = reserve_slot(allocator_, sequence.table, length, block_size_);
  if (!reservation.ok) return reservation;                      // out of blocks: nothing changed
  if (reservation.fresh) forget_if_cached(*reservation.fresh);  // reusing it evicts its content
  sequence.tokens.push_back(token);
  return reservation;
}
//! [append_token]

bool BlockManager::can_append(SequenceId id) const {
  const Sequence& sequence = find(id, "can_append");
  const bool needs_block =
      sequence.tokens.size() % block_size_ == 0 || allocator_.ref_count(sequence.table.back()) > 1;
  return !needs_block || allocator_.num_free() > 0;
}

void BlockManager::fork(SequenceId parent, SequenceId child) {
  const Sequence& original = find(parent, "fork");
  BOOK_CHECK(!sequences_.contains(child),
             "BlockManager::fork: sequence " << child << " already exists");
  Sequence copy = original;
  for (const BlockId block : copy.table) allocator_.retain(block);
  sequences_.emplace(child, std::move(copy));
}

void BlockManager::free(SequenceId id) {
  const auto it = sequences_.find(id);
  BOOK_CHECK(it != sequences_.end(),
             "BlockManager::free: unknown sequence " << id << " (never added, or already freed)");
  // Last block first: among cached blocks the queue then evicts a prefix's tail before its head,
  // and heads (system prompts) are what later requests share.
  const BlockTable& table = it->second.table;
  for (auto block = table.rbegin(); block != table.rend(); ++block)
    allocator_.release(*block, /*keep_cached=*/cached_.contains(*block));
  sequences_.erase(it);
}

void BlockManager::truncate(SequenceId id, int length) {
  Sequence& sequence = find(id, "truncate");
  const int old_length = static_cast<int>(sequence.tokens.size());
  BOOK_CHECK(length >= 1 && length <= old_length, "BlockManager::truncate: sequence "
                                                      << id << " has " << old_length
                                                      << " tokens; cannot keep " << length
                                                      << " (keep between 1 and its length)");
  const std::size_t keep = static_cast<std::size_t>((length + block_size_ - 1) / block_size_);
  while (sequence.table.size() > keep) {  // last block first, as free() does
    const BlockId block = sequence.table.back();
    sequence.table.pop_back();
    allocator_.release(block, /*keep_cached=*/cached_.contains(block));
  }
  sequence.tokens.resize(static_cast<std::size_t>(length));
  sequence.computed = std::min(sequence.computed, length);
  sequence.hashes.resize(
      std::min(sequence.hashes.size(), static_cast<std::size_t>(length / block_size_)));
  // A cached block that is now this sequence's partial last block will be overwritten by the
  // next append: its cache entry would name tokens it no longer holds. Shared, it is copied on
  // write instead (append_token), and its entry stays true.
  const BlockId last = sequence.table.back();
  if (length % block_size_ != 0 && allocator_.ref_count(last) == 1) forget_if_cached(last);
}

int BlockManager::evict_cached(int max_blocks) {
  int dropped = 0;
  for (const BlockId block : allocator_.free_queue()) {
    if (dropped >= max_blocks) break;
    if (!cached_.contains(block)) continue;
    forget_if_cached(block);
    ++dropped;
  }
  return dropped;
}

bool BlockManager::contains(SequenceId id) const { return sequences_.contains(id); }

const BlockTable& BlockManager::block_table(SequenceId id) const {
  return find(id, "block_table").table;
}

std::span<const int> BlockManager::tokens(SequenceId id) const { return find(id, "tokens").tokens; }

int BlockManager::length(SequenceId id) const {
  return static_cast<int>(find(id, "length").tokens.size());
}

int BlockManager::computed(SequenceId id) const { return find(id, "computed").computed; }

std::vector<SequenceId> BlockManager::sequences() const {
  std::vector<SequenceId> ids;
  for (const auto& [id, sequence] : sequences_) ids.push_back(id);
  return ids;
}

std::int64_t BlockManager::logical_blocks() const {
  std::int64_t total = 0;
  for (const auto& [id, sequence] : sequences_)
    total += static_cast<std::int64_t>(sequence.table.size());
  return total;
}

std::int64_t BlockManager::logical_tokens() const {
  std::int64_t total = 0;
  for (const auto& [id, sequence] : sequences_)
    total += static_cast<std::int64_t>(sequence.tokens.size());
  return total;
}

void BlockManager::check_invariants() const {
  std::vector<int> references(num_blocks(), 0);
  for (const auto& [id, s] : sequences_) {
    const int length = static_cast<int>(s.tokens.size());
    BOOK_CHECK(static_cast<int>(s.table.size()) == blocks_for(length, block_size_),
               "invariant: sequence " << id << " has " << length << " tokens in " << s.table.size()
                                      << " blocks of " << block_size_);
    BOOK_CHECK(s.computed >= 0 && s.computed <= length, "invariant: sequence "
                                                            << id << " has " << s.computed << " of "
                                                            << length << " tokens computed");
    std::set<BlockId> seen;
    for (std::size_t i = 0; i < s.table.size(); ++i) {
      const BlockId block = s.table[i];
      BOOK_CHECK(
          block >= 0 && block < num_blocks() && seen.insert(block).second,
          "invariant: sequence " << id << " holds block " << block << " twice or outside the pool");
      ++references[block];
      const auto named = cached_.find(block);  // a named block holds what its hash names
      if (named != cached_.end() && static_cast<int>(i + 1) * block_size_ <= length)
        BOOK_CHECK(std::equal(named->second.tokens.begin(), named->second.tokens.end(),
                              s.tokens.begin() + static_cast<long>(i) * block_size_),
                   "invariant: cached block " << block << " is logical block " << i
                                              << " of sequence " << id
                                              << " but holds other tokens");
    }
  }
  std::set<BlockId> free_blocks;
  for (const BlockId block : allocator_.free_queue())
    BOOK_CHECK(free_blocks.insert(block).second,
               "invariant: block " << block << " is queued twice as free");
  BOOK_CHECK(static_cast<int>(free_blocks.size()) == allocator_.num_free(),
             "invariant: the free queue has " << free_blocks.size() << " blocks, num_free says "
                                              << allocator_.num_free());
  for (BlockId block = 0; block < num_blocks(); ++block) {
    BOOK_CHECK(allocator_.ref_count(block) == references[block],
               "invariant: block " << block << " has reference count "
                                   << allocator_.ref_count(block) << " but " << references[block]
                                   << " block tables hold it");
    BOOK_CHECK(free_blocks.contains(block) == (references[block] == 0),
               "invariant: block " << block << " is " << (free_blocks.contains(block) ? "" : "not ")
                                   << "in the free queue with " << references[block]
                                   << " references");
  }
  BOOK_CHECK(cache_.size() == cached_.size(), "invariant: the prefix cache names "
                                                  << cache_.size() << " hashes but "
                                                  << cached_.size() << " blocks");
  for (const auto& [hash, block] : cache_)
    BOOK_CHECK(
        cached_.contains(block) && cached_.at(block).hash == hash,
        "invariant: hash " << hash << " names block " << block << ", which does not carry it");
}

}  // namespace book::kv
