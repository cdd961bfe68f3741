// Graded tests of kv.prefix_hash: one hash per full block, chained from the root, so a block's
// hash names its whole prefix; no collisions among many blocks.
#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "chapters/10_paged_attention/prefix_hash.h"
#include "common/rng.h"
#include "common/testing/exercise.h"
#include "common/testing/expect_error.h"

namespace book::kv {
namespace {

using book::testing::expect_error;

std::vector<int> random_tokens(Rng& rng, int n) {
  std::vector<int> t(n);
  for (int& x : t) x = static_cast<int>(rng.uniform_int(0, 50000));
  return t;
}

EXERCISE_TEST("kv.prefix_hash", PrefixHash, OneHashPerFullBlockChainedFromTheRoot) {
  Rng rng(1);
  const auto tokens = random_tokens(rng, 37);
  const auto hashes = prefix_block_hashes(tokens, 16);
  ASSERT_EQ(hashes.size(), 2u) << "37 tokens in blocks of 16: two full blocks, one partial";
  const std::span<const int> all(tokens);
  EXPECT_EQ(hashes[0], hash_block(kRootPrefixHash, all.subspan(0, 16)));
  EXPECT_EQ(hashes[1], hash_block(hashes[0], all.subspan(16, 16)));
  EXPECT_EQ(prefix_block_hashes(tokens, 1).size(), 37u);
  EXPECT_EQ(prefix_block_hashes(all.first(15), 16).size(), 0u) << "no full block, no hash";
  EXPECT_EQ(prefix_block_hashes(tokens, 16), hashes) << "deterministic";
}

EXERCISE_TEST("kv.prefix_hash", PrefixHash, EqualPrefixesShareHashesUntilTheyDiffer) {
  Rng rng(2);
  auto a = random_tokens(rng, 80), b = a;
  b[45] += 1;  // differ inside block 2 (positions 32..47) of blocks of 16
  const auto ha = prefix_block_hashes(a, 16), hb = prefix_block_hashes(b, 16);
  ASSERT_EQ(ha.size(), 5u);
  EXPECT_EQ(ha[0], hb[0]);
  EXPECT_EQ(ha[1], hb[1]);
  for (int i = 2; i < 5; ++i)
    EXPECT_NE(ha[i], hb[i]) << "block " << i << " follows the changed token 45: its prefix differs";
}

EXERCISE_TEST("kv.prefix_hash", PrefixHash, TheSameBlockAfterAnotherPrefixHasAnotherHash) {
  Rng rng(3);
  auto a = random_tokens(rng, 32), b = a;
  b[0] += 7;  // block 1 (positions 16..31) is identical in both; block 0 differs
  const auto ha = prefix_block_hashes(a, 16), hb = prefix_block_hashes(b, 16);
  EXPECT_NE(ha[1], hb[1]) << "a block's hash must name its whole prefix, not only its own tokens "
                             "(its K and V depend on every earlier token)";
  EXPECT_NE(hash_block(1, std::vector<int>{5}), hash_block(2, std::vector<int>{5}))
      << "the parent matters";
  EXPECT_NE(hash_block(kRootPrefixHash, std::vector<int>{1}),
            hash_block(kRootPrefixHash, std::vector<int>{1, 0}))
      << "the count matters";
  EXPECT_NE(hash_block(kRootPrefixHash, std::vector<int>{1, 2}),
            hash_block(kRootPrefixHash, std::vector<int>{2, 1}))
      << "the order matters";
}

EXERCISE_TEST("kv.prefix_hash", PrefixHash, NoCollisionsAmongTwentyThousandBlocks) {
  Rng rng(4);
  std::set<std::uint64_t> seen;
  int blocks = 0;
  for (int i = 0; i < 2000; ++i) {
    auto tokens = random_tokens(rng, 16);
    for (int variant = 0; variant < 10; ++variant) {  // near neighbours: one token changed
      if (variant > 0) tokens[rng.uniform_int(0, 15)] += 1;
      seen.insert(hash_block(static_cast<std::uint64_t>(i % 3), tokens));
      ++blocks;
    }
  }
  EXPECT_EQ(static_cast<int>(seen.size()), blocks) << "distinct blocks must hash apart";
}

EXERCISE_TEST("kv.prefix_hash", PrefixHash, RefusesBlockSizeZero) {
  const std::vector<int> tokens = {1, 2, 3};
  EXPECT_EQ(prefix_block_hashes(tokens, 3).size(), 1u);
  expect_error([&] { prefix_block_hashes(tokens, 0); }, "block size must be >= 1 token, got 0");
}

}  // namespace
}  // namespace book::kv
