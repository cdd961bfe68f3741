// Graded tests of the block manager, which runs on the three bookkeeping exercises: scenarios
// (fork and copy-on-write, running out, prefix-cache hits and LRU eviction, counted blocks) and a
// seeded fuzzer of thousands of random add / append / fork / free / evict steps against a shadow
// KV store that records which token each slot holds. After every step: the reference counts equal
// the tables that hold each block, the free queue is exactly the unreferenced blocks, every
// sequence reads its own tokens back through its table, and no write ever lands in a shared
// block. At the end every block is free: nothing leaked.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "chapters/10_paged_attention/block_manager.h"
#include "chapters/10_paged_attention/kv_shape.h"
#include "common/rng.h"
#include "common/testing/exercise.h"
#include "common/testing/expect_error.h"

namespace book::kv {
namespace {

using book::testing::expect_error;

std::vector<int> iota_tokens(int n, int first = 0) {
  std::vector<int> t(n);
  for (int i = 0; i < n; ++i) t[i] = first + i;
  return t;
}

EXERCISE_TEST("kv.block_allocator", BlockManager, BlocksPerSequenceAreTheCeilingOfLengthOverB) {
  for (const int bs : {1, 16, 7}) {
    BlockManager m(200, bs, /*prefix_caching=*/false);
    int expected = 0;
    const std::vector<int> lengths = {1, 15, 16, 17, 40, 48};
    for (std::size_t i = 0; i < lengths.size(); ++i) {
      ASSERT_TRUE(m.add_sequence(static_cast<SequenceId>(i), iota_tokens(lengths[i])).ok);
      expected += blocks_for(lengths[i], bs);
      EXPECT_EQ(static_cast<int>(m.block_table(i).size()), blocks_for(lengths[i], bs))
          << "length " << lengths[i] << ", block size " << bs;
    }
    EXPECT_EQ(m.num_used_blocks(), expected) << "block size " << bs;
    for (int step = 0; step < 30; ++step) ASSERT_TRUE(m.append_token(4, 1).ok);
    EXPECT_EQ(static_cast<int>(m.block_table(4).size()), blocks_for(70, bs));
    for (std::size_t i = 0; i < lengths.size(); ++i) m.free(static_cast<SequenceId>(i));
    EXPECT_EQ(m.num_free_blocks(), 200) << "every block back: nothing leaked";
  }
}

EXERCISE_TEST("kv.block_allocator", BlockManager, RunningOutIsAResultAndChangesNothing) {
  BlockManager m(4, 4, false);
  ASSERT_TRUE(m.add_sequence(1, iota_tokens(10)).ok);  // 3 blocks
  const Admission refused = m.add_sequence(2, iota_tokens(5));
  EXPECT_FALSE(refused.ok) << "5 tokens need 2 blocks, 1 is free";
  EXPECT_FALSE(m.contains(2));
  EXPECT_EQ(m.num_free_blocks(), 1);
  ASSERT_TRUE(m.append_token(1, 7).ok);
  ASSERT_TRUE(m.append_token(1, 7).ok);  // 12 tokens: 3 full blocks
  ASSERT_TRUE(m.append_token(1, 7).ok);  // block 4
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(m.append_token(1, 7).ok);
  EXPECT_FALSE(m.can_append(1));
  const SlotReservation none = m.append_token(1, 8);
  EXPECT_FALSE(none.ok) << "16 tokens fill all 4 blocks";
  EXPECT_EQ(m.length(1), 16) << "a failed append adds no token";
  EXPECT_EQ(m.block_table(1).size(), 4u);
  m.check_invariants();
  m.free(1);
  EXPECT_EQ(m.num_free_blocks(), 4);
}

EXERCISE_TEST("kv.copy_on_write", BlockManager, ForksShareBlocksUntilOneWrites) {
  BlockManager m(16, 4, false);
  ASSERT_TRUE(m.add_sequence(0, iota_tokens(6)).ok);  // blocks: full, half
  for (SequenceId child = 1; child <= 3; ++child) m.fork(0, child);
  EXPECT_EQ(m.ref_count(m.block_table(0)[0]), 4);
  EXPECT_EQ(m.ref_count(m.block_table(0)[1]), 4);
  EXPECT_EQ(m.num_used_blocks(), 2) << "four sequences, two physical blocks";
  EXPECT_EQ(m.logical_blocks(), 8);
  int copies = 0;
  for (SequenceId id = 0; id <= 3; ++id) {
    const SlotReservation r = m.append_token(id, 100 + static_cast<int>(id));
    ASSERT_TRUE(r.ok);
    copies += r.copy.has_value();
    EXPECT_EQ(m.ref_count(r.slot.block), 1) << "sequence " << id << " writes an exclusive block";
  }
  EXPECT_EQ(copies, 3) << "the first three writers copy the shared half block; the last one is "
                          "then its only owner and writes in place";
  EXPECT_EQ(m.num_used_blocks(), 5);
  EXPECT_EQ(m.ref_count(m.block_table(0)[0]), 4) << "the full block is never copied";
  m.check_invariants();
  for (SequenceId id = 0; id <= 3; ++id) m.free(id);
  EXPECT_EQ(m.num_free_blocks(), 16);
}

EXERCISE_TEST("kv.prefix_hash", BlockManager, PrefixHitsReuseBlocksAndEvictionIsLeastRecentlyUsed) {
  const int bs = 4;
  BlockManager m(8, bs, true);
  const std::vector<int> a = iota_tokens(13);  // 3 full blocks + 1 token
  ASSERT_EQ(m.add_sequence(1, a).cached_tokens, 0) << "an empty cache has nothing";
  m.mark_computed(1, 13);
  EXPECT_EQ(m.num_cached_blocks(), 3) << "the three full computed blocks are named";
  std::vector<int> b = iota_tokens(12);  // the same 3 blocks exactly
  b.push_back(99);
  b.push_back(98);
  const Admission hit = m.add_sequence(2, b);
  ASSERT_TRUE(hit.ok);
  EXPECT_EQ(hit.cached_tokens, 12) << "three full blocks found";
  for (int i = 0; i < 3; ++i) EXPECT_EQ(m.block_table(2)[i], m.block_table(1)[i]);
  EXPECT_EQ(m.ref_count(m.block_table(1)[0]), 2);
  EXPECT_EQ(m.prefix_stats().hit_blocks, 3);
  // A prompt of exactly 12 cached tokens reuses only 2 blocks: the last token's logits are needed.
  EXPECT_EQ(m.add_sequence(3, iota_tokens(12)).cached_tokens, 8);
  m.free(3);
  m.free(2);
  m.free(1);
  EXPECT_EQ(m.num_free_blocks(), 8);
  EXPECT_EQ(m.num_cached_blocks(), 3) << "freed but still named: a later request can hit them";
  // Plain blocks at the front; the prefix's blocks at the back, its tail (2) before its head (0):
  // a sequence is freed last block first, and later requests share heads more often than tails.
  EXPECT_EQ(m.free_queue(), (std::vector<BlockId>{3, 4, 5, 6, 7, 2, 1, 0}));
  const Admission again = m.add_sequence(4, b);
  EXPECT_EQ(again.cached_tokens, 12) << "a free cached block is revived, not recomputed";
  m.free(4);
  // Unrelated tokens fill 6 blocks: the 5 plain ones, then the least recently used cached block.
  ASSERT_TRUE(m.add_sequence(5, iota_tokens(24, 1000)).ok);
  EXPECT_EQ(m.num_cached_blocks(), 2);
  EXPECT_EQ(m.prefix_stats().evicted_blocks, 1);
  m.free(5);
  EXPECT_EQ(m.add_sequence(6, b).cached_tokens, 8)
      << "the prefix's last block was evicted first; its first two blocks survive";
  m.check_invariants();
}

EXERCISE_TEST("kv.block_allocator", BlockManager, RefusesUnknownAndDuplicateSequences) {
  BlockManager m(8, 4);
  ASSERT_TRUE(m.add_sequence(1, iota_tokens(3)).ok);
  expect_error([&] { m.free(7); }, "BlockManager::free: unknown sequence 7");
  expect_error([&] { m.add_sequence(1, iota_tokens(2)); }, "sequence 1 already exists");
  expect_error([&] { m.add_sequence(2, {}); }, "sequence 2 has an empty prompt");
  expect_error([&] { m.append_token(9, 0); }, "append_token: unknown sequence 9");
  expect_error([&] { m.fork(9, 10); }, "fork: unknown sequence 9");
  expect_error([&] { m.fork(1, 1); }, "fork: sequence 1 already exists");
  expect_error([&] { m.mark_computed(1, 4); }, "has 3 tokens, 0 computed; cannot mark 4");
  m.free(1);
  expect_error([&] { m.free(1); }, "unknown sequence 1 (never added, or already freed)");
  expect_error([] { BlockManager bad(8, 0); }, "block size must be >= 1 token, got 0");
  EXPECT_EQ(m.num_free_blocks(), 8);
}

// The fuzzer. The shadow store holds, per physical slot, the token whose K and V it holds.
class Fuzzer {
 public:
  Fuzzer(int blocks, int bs, bool prefix_caching, std::uint64_t seed)
      : m_(blocks, bs, prefix_caching),
        bs_(bs),
        rng_(seed),
        shadow_(blocks, std::vector<int>(bs, -1)) {
    for (int p = 0; p < 4; ++p) {  // shared prefixes of 0..3 blocks: prefix-cache hits
      std::vector<int> prefix(static_cast<std::size_t>(p) * bs + rng_.uniform_int(0, bs - 1));
      for (int& t : prefix) t = static_cast<int>(rng_.uniform_int(0, 999));
      prefixes_.push_back(prefix);
    }
  }

  void run(int steps) {
    for (step_ = 0; step_ < steps; ++step_) {
      const int op = static_cast<int>(rng_.uniform_int(0, 9));
      if (op <= 2 || live_.empty())
        add();
      else if (op <= 6)
        append(pick());
      else if (op == 7 && live_.size() < 40)
        fork(pick());
      else if (op == 8)
        free(pick());
      else
        ASSERT_GE(m_.evict_cached(static_cast<int>(rng_.uniform_int(0, 3))), 0);
      if (::testing::Test::HasFatalFailure()) return;
      check();
      if (::testing::Test::HasFatalFailure()) return;
    }
    for (const SequenceId id : std::vector<SequenceId>(live_.begin(), live_.end())) free(id);
    EXPECT_EQ(m_.num_free_blocks(), m_.num_blocks()) << "leak: blocks still held at the end";
    for (BlockId b = 0; b < m_.num_blocks(); ++b) EXPECT_EQ(m_.ref_count(b), 0) << "block " << b;
    m_.evict_cached(m_.num_blocks());
    EXPECT_EQ(m_.num_cached_blocks(), 0);
  }

  const BlockManager& manager() const { return m_; }
  int failed_admissions = 0, failed_appends = 0, copies = 0;

 private:
  SequenceId pick() {
    auto it = live_.begin();
    std::advance(it, rng_.uniform_int(0, static_cast<std::int64_t>(live_.size()) - 1));
    return *it;
  }

  // A write of position p of `id`: never into a block another table holds.
  void write(SequenceId id, int p, int token) {
    const BlockId block = m_.block_table(id)[p / bs_];
    ASSERT_EQ(m_.ref_count(block), 1)
        << "step " << step_ << ": sequence " << id << " writes position " << p << " into block "
        << block << ", which is shared";
    shadow_[block][p % bs_] = token;
  }

  void add() {
    std::vector<int> prompt = prefixes_[rng_.uniform_int(0, 3)];
    const int own = static_cast<int>(rng_.uniform_int(1, 3 * bs_));
    for (int i = 0; i < own; ++i) prompt.push_back(static_cast<int>(rng_.uniform_int(0, 999)));
    const SequenceId id = next_id_++;
    const int free_before = m_.num_free_blocks(), cached_before = m_.num_cached_blocks();
    const Admission a = m_.add_sequence(id, prompt);
    if (!a.ok) {
      ++failed_admissions;
      ASSERT_FALSE(m_.contains(id)) << "step " << step_;
      ASSERT_EQ(m_.num_free_blocks(), free_before) << "step " << step_ << ": refused, yet changed";
      ASSERT_EQ(m_.num_cached_blocks(), cached_before) << "step " << step_;
      return;
    }
    live_.insert(id);
    ASSERT_EQ(a.cached_tokens % bs_, 0);
    ASSERT_LT(a.cached_tokens, static_cast<int>(prompt.size())) << "the last token is recomputed";
    const BlockTable& table = m_.block_table(id);
    for (int p = 0; p < a.cached_tokens; ++p)  // a hit returns exactly this prompt's tokens
      ASSERT_EQ(shadow_[table[p / bs_]][p % bs_], prompt[p])
          << "step " << step_ << ": prefix hit for sequence " << id << " at position " << p;
    for (int p = a.cached_tokens; p < static_cast<int>(prompt.size()); ++p) write(id, p, prompt[p]);
    m_.mark_computed(id, static_cast<int>(prompt.size()));
  }

  void append(SequenceId id) {
    const int token = static_cast<int>(rng_.uniform_int(0, 999));
    const BlockTable before = m_.block_table(id);
    const int free_before = m_.num_free_blocks();
    const SlotReservation r = m_.append_token(id, token);
    if (!r.ok) {
      ++failed_appends;
      ASSERT_EQ(m_.block_table(id), before) << "step " << step_ << ": refused, yet changed";
      ASSERT_EQ(m_.num_free_blocks(), free_before) << "step " << step_;
      return;
    }
    if (r.copy) {
      ++copies;
      for (int s = 0; s < r.copy->tokens; ++s)
        shadow_[r.copy->destination][s] = shadow_[r.copy->source][s];
    }
    const int p = m_.length(id) - 1;
    ASSERT_EQ(r.slot.block, m_.block_table(id)[p / bs_]);
    ASSERT_EQ(r.slot.offset, p % bs_);
    write(id, p, token);
    m_.mark_computed(id, p + 1);
  }

  void fork(SequenceId parent) {
    const SequenceId child = next_id_++;
    m_.fork(parent, child);
    live_.insert(child);
  }

  void free(SequenceId id) {
    m_.free(id);
    live_.erase(id);
    if (rng_.uniform() < 0.05)
      book::testing::expect_error([&] { m_.free(id); }, "unknown sequence");  // freed twice
  }

  // Counts recomputed here, independently of the manager's own check_invariants.
  void check() {
    m_.check_invariants();
    std::map<BlockId, int> references;
    for (const SequenceId id : live_) {
      const BlockTable& table = m_.block_table(id);
      const auto tokens = m_.tokens(id);
      ASSERT_EQ(static_cast<int>(table.size()), blocks_for(static_cast<int>(tokens.size()), bs_));
      for (const BlockId b : table) ++references[b];
      for (int p = 0; p < m_.computed(id); ++p)
        ASSERT_EQ(shadow_[table[p / bs_]][p % bs_], tokens[p])
            << "step " << step_ << ": sequence " << id << " reads position " << p << " from block "
            << table[p / bs_] << " and finds another token";
    }
    for (BlockId b = 0; b < m_.num_blocks(); ++b)
      ASSERT_EQ(m_.ref_count(b), references.contains(b) ? references[b] : 0)
          << "step " << step_ << ": block " << b << "'s reference count";
    ASSERT_EQ(m_.num_free_blocks(), m_.num_blocks() - static_cast<int>(references.size()));
  }

  BlockManager m_;
  int bs_;
  Rng rng_;
  std::vector<std::vector<int>> shadow_;
  std::vector<std::vector<int>> prefixes_;
  std::set<SequenceId> live_;
  SequenceId next_id_ = 0;
  int step_ = 0;
};

EXERCISE_TEST("kv.copy_on_write", BlockManagerFuzz, ForksAppendsAndFreesKeepEveryInvariant) {
  for (const int bs : {1, 16, 5}) {
    Fuzzer fuzz(bs == 1 ? 48 : 24, bs, /*prefix_caching=*/false, 1000 + bs);
    fuzz.run(4000);
    if (::testing::Test::HasFatalFailure()) return;
    if (bs > 1) {
      EXPECT_GT(fuzz.copies, 0) << "block size " << bs << ": the run never copied on write";
    } else {  // blocks of one token are full when shared: a fork never needs a copy
      EXPECT_EQ(fuzz.copies, 0) << "blocks of one token are never written after a fork";
    }
    EXPECT_GT(fuzz.failed_appends + fuzz.failed_admissions, 0)
        << "block size " << bs << ": the run never ran out of blocks";
  }
}

EXERCISE_TEST("kv.prefix_hash", BlockManagerFuzz, PrefixCacheHitsReturnTheSameTokens) {
  for (const int bs : {1, 16, 5}) {
    Fuzzer fuzz(bs == 1 ? 64 : 32, bs, /*prefix_caching=*/true, 2000 + bs);
    fuzz.run(4000);
    if (::testing::Test::HasFatalFailure()) return;
    EXPECT_GT(fuzz.manager().prefix_stats().hit_blocks, 0) << "block size " << bs << ": no hit";
    EXPECT_GT(fuzz.manager().prefix_stats().evicted_blocks, 0)
        << "block size " << bs << ": nothing was ever evicted";
  }
}

}  // namespace
}  // namespace book::kv
