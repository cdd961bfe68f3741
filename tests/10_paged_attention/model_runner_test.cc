// Tests of incremental decoding with chapter 4's model (on the reference exercise bodies):
// prefill then one token at a time gives the full forward pass's logits; the paged cache gives the
// contiguous cache's logits bit for bit (ragged lengths, block sizes 1, 16 and 7, forks); a
// prefix-cache hit gives the logits of a run that computed the whole prompt.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "chapters/10_paged_attention/block_manager.h"
#include "chapters/10_paged_attention/model_runner.h"
#include "chapters/10_paged_attention/served_model.h"
#include "common/rng.h"
#include "common/testing/expect_error.h"

namespace book::kv {
namespace {

using book::testing::expect_error;

train::Config small_config() {
  train::Config c;
  c.vocab_size = 50;
  c.context = 96;
  c.n_layer = 3;
  c.n_head = 4;
  c.d_model = 32;
  return c;
}

std::vector<int> random_tokens(Rng& rng, int n, int vocab) {
  std::vector<int> t(n);
  for (int& x : t) x = static_cast<int>(rng.uniform_int(0, vocab - 1));
  return t;
}

// Greedy choices could flip on a near-tie between float orders, so the tokens are fixed up front:
// the test compares logits at every step, which is stronger than comparing choices.
TEST(ModelRunner, PrefillThenDecodeGivesTheFullForwardLogits) {
  const train::Config config = small_config();
  auto model = random_model(config, 5);
  Rng rng(6);
  const std::vector<int> sequence = random_tokens(rng, 60, config.vocab_size);
  const int prompt = 23;
  // The full forward pass over the whole sequence: logits for every position.
  model->forward(sequence.data(), nullptr, 1, static_cast<int>(sequence.size()));
  const std::vector<float> full(model->logits(),
                                model->logits() + sequence.size() * config.vocab_size);
  for (const AttentionKernel kernel : {AttentionKernel::kReference, AttentionKernel::kFast}) {
    PagedKvCache cache(kv_shape_of(config), 8, 16);
    cache.poison();  // a slot read before it is written turns the logits into NaN
    ModelRunner runner(*model, cache, 64, kernel);
    const std::vector<BlockId> table = {6, 2, 7, 0};  // scattered on purpose
    double worst = 0, scale = 0;
    auto compare = [&](std::span<const float> got, int position) {
      for (int v = 0; v < config.vocab_size; ++v) {
        const double want = full[static_cast<std::size_t>(position) * config.vocab_size + v];
        ASSERT_TRUE(std::isfinite(got[v])) << "position " << position << ", logit " << v;
        worst = std::max(worst, std::abs(got[v] - want));
        scale = std::max(scale, std::abs(want));
      }
    };
    const SequenceChunk prefill{std::span(sequence).first(prompt), 0, table, /*all=*/true};
    const auto logits = runner.run({&prefill, 1});
    for (int p = 0; p < prompt; ++p)
      compare(logits.subspan(static_cast<std::size_t>(p) * config.vocab_size, config.vocab_size),
              p);
    for (int p = prompt; p < static_cast<int>(sequence.size()); ++p) {
      const SequenceChunk step{std::span(sequence).subspan(p, 1), p, table};
      compare(runner.run({&step, 1}), p);
    }
    EXPECT_LE(worst, 1e-5 * std::max(1.0, scale))
        << (kernel == AttentionKernel::kFast ? "fast" : "reference")
        << " kernel: largest logit difference " << worst << " against the full forward pass "
        << "(tolerance 1e-5 relative: attention sums in another order)";
  }
}

struct Batch {
  std::vector<std::vector<int>> tokens;  // whole sequences
  std::vector<int> prompts;              // prompt length of each
};

Batch ragged_batch(int vocab) {
  Rng rng(8);
  Batch b;
  for (const int len : {1, 15, 17, 40, 5}) {
    b.prompts.push_back(len);
    b.tokens.push_back(random_tokens(rng, len + 9, vocab));  // 9 decode steps each
  }
  return b;
}

// Runs the batch: all prompts in one step, then one token per sequence per step, recording every
// logit. `tables` gives each sequence's blocks in `cache`.
std::vector<float> run_batch(ModelRunner& runner, const Batch& b,
                             const std::vector<std::vector<BlockId>>& tables) {
  std::vector<float> all;
  std::vector<SequenceChunk> chunks;
  for (std::size_t i = 0; i < b.tokens.size(); ++i)
    chunks.push_back({std::span(b.tokens[i]).first(b.prompts[i]), 0, tables[i], true});
  auto logits = runner.run(chunks);
  all.insert(all.end(), logits.begin(), logits.end());
  for (int step = 0; step < 9; ++step) {
    chunks.clear();
    for (std::size_t i = 0; i < b.tokens.size(); ++i)
      chunks.push_back(
          {std::span(b.tokens[i]).subspan(b.prompts[i] + step, 1), b.prompts[i] + step, tables[i]});
    logits = runner.run(chunks);
    all.insert(all.end(), logits.begin(), logits.end());
  }
  return all;
}

TEST(ModelRunner, PagedLogitsEqualContiguousLogitsBitForBit) {
  const train::Config config = small_config();
  auto model = random_model(config, 9);
  const Batch batch = ragged_batch(config.vocab_size);
  ContiguousKvCache contiguous(kv_shape_of(config), 5, config.context);
  ModelRunner contiguous_runner(*model, contiguous.storage(), 128);
  std::vector<std::vector<BlockId>> slots;
  for (int i = 0; i < 5; ++i) slots.push_back({*contiguous.acquire()});
  const std::vector<float> want = run_batch(contiguous_runner, batch, slots);
  for (const int bs : {1, 16, 7}) {
    BlockManager manager(400, bs, false);
    PagedKvCache cache(kv_shape_of(config), 400, bs);
    cache.poison();
    // Scatter the blocks: sequences made and freed first leave the free queue shuffled.
    Rng rng(10);
    for (SequenceId junk = 100; junk < 110; ++junk)
      manager.add_sequence(junk, random_tokens(rng, static_cast<int>(rng.uniform_int(1, 30)), 50));
    for (SequenceId junk = 100; junk < 110; junk += 2) manager.free(junk);
    std::vector<std::vector<BlockId>> tables;
    for (int i = 0; i < 5; ++i) {
      ASSERT_TRUE(manager.add_sequence(i, batch.tokens[i]).ok);  // room for prompt + 9 tokens
      tables.push_back(manager.block_table(i));
    }
    ModelRunner runner(*model, cache, 128);
    const std::vector<float> got = run_batch(runner, batch, tables);
    ASSERT_EQ(got.size(), want.size());
    EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0)
        << "block size " << bs << ": paged logits differ from contiguous ones in some bit";
  }
}

// Parallel sampling: a prompt forked into four sequences that each continue differently. Each must
// see exactly what an unforked sequence with the same tokens sees, although they share the prompt's
// blocks and copied the shared half block on their first write.
TEST(ModelRunner, ForkedSequencesMatchIndependentOnesBitForBit) {
  const train::Config config = small_config();
  auto model = random_model(config, 11);
  Rng rng(12);
  const std::vector<int> prompt = random_tokens(rng, 21, config.vocab_size);  // 2 blocks of 16
  std::vector<std::vector<int>> continuations;
  for (int i = 0; i < 4; ++i) continuations.push_back(random_tokens(rng, 12, config.vocab_size));

  auto run = [&](bool fork) {
    BlockManager manager(64, 16, false);
    PagedKvCache cache(kv_shape_of(config), 64, 16);
    cache.poison();
    ModelRunner runner(*model, cache, 64);
    std::vector<float> logits;
    int copies = 0;
    for (SequenceId id = 0; id < 4; ++id) {
      if (!fork || id == 0) {
        manager.add_sequence(id, prompt);
        const SequenceChunk chunk{prompt, 0, manager.block_table(id)};
        const auto out = runner.run({&chunk, 1});
        logits.insert(logits.end(), out.begin(), out.end());
        manager.mark_computed(id, static_cast<int>(prompt.size()));
      } else {
        manager.fork(0, id);  // shares both blocks; the prompt's logits are the parent's
        logits.insert(logits.end(), logits.begin(), logits.begin() + config.vocab_size);
      }
    }
    for (int step = 0; step < 12; ++step)
      for (SequenceId id = 0; id < 4; ++id) {
        const int token = continuations[id][step];
        const SlotReservation slot = manager.append_token(id, token);
        EXPECT_TRUE(slot.ok);
        if (slot.copy) {
          cache.copy(*slot.copy);
          ++copies;
        }
        const int position = static_cast<int>(prompt.size()) + step;
        const SequenceChunk chunk{std::span(continuations[id]).subspan(step, 1), position,
                                  manager.block_table(id)};
        const auto out = runner.run({&chunk, 1});
        logits.insert(logits.end(), out.begin(), out.end());
      }
    return std::make_pair(logits, copies);
  };
  const auto [independent, no_copies] = run(false);
  const auto [forked, copies] = run(true);
  EXPECT_EQ(no_copies, 0);
  EXPECT_EQ(copies, 3) << "the first three sequences to write copy the shared half block";
  ASSERT_EQ(forked.size(), independent.size());
  EXPECT_EQ(std::memcmp(forked.data(), independent.data(), forked.size() * sizeof(float)), 0)
      << "forked sequences must read exactly what independent ones read";
}

TEST(ModelRunner, APrefixCacheHitGivesTheLogitsOfTheWholePrompt) {
  const train::Config config = small_config();
  auto model = random_model(config, 13);
  Rng rng(14);
  const std::vector<int> system = random_tokens(rng, 40, config.vocab_size);  // 2.5 blocks of 16
  std::vector<int> first = system, second = system;
  for (int t : random_tokens(rng, 9, config.vocab_size)) first.push_back(t);
  for (int t : random_tokens(rng, 11, config.vocab_size)) second.push_back(t);

  auto serve_second = [&](bool prefix_caching, int& cached) {
    BlockManager manager(32, 16, prefix_caching);
    PagedKvCache cache(kv_shape_of(config), 32, 16);
    cache.poison();
    ModelRunner runner(*model, cache, 64);
    manager.add_sequence(1, first);
    const SequenceChunk a{first, 0, manager.block_table(1)};
    runner.run({&a, 1});
    manager.mark_computed(1, static_cast<int>(first.size()));
    manager.free(1);  // its full blocks stay in the cache, free
    cached = manager.add_sequence(2, second).cached_tokens;
    const SequenceChunk b{std::span(second).subspan(cached), cached, manager.block_table(2), true};
    const auto out = runner.run({&b, 1});
    // The logits of the positions both runs computed: the uncached tail.
    const std::size_t tail = second.size() - 32;
    return std::vector<float>(out.end() - static_cast<long>(tail * config.vocab_size), out.end());
  };
  int cached_with = 0, cached_without = 0;
  const auto with_cache = serve_second(true, cached_with);
  const auto without = serve_second(false, cached_without);
  EXPECT_EQ(cached_with, 32) << "the two full blocks of the system prompt are hits";
  EXPECT_EQ(cached_without, 0);
  ASSERT_EQ(with_cache.size(), without.size());
  EXPECT_EQ(std::memcmp(with_cache.data(), without.data(), with_cache.size() * sizeof(float)), 0)
      << "a prefix-cache hit must give the logits of recomputing the prefix, bit for bit";
}

TEST(ModelRunner, RefusesWhatItCannotServe) {
  const train::Config config = small_config();
  auto model = random_model(config, 15);
  PagedKvCache cache(kv_shape_of(config), 16, 16);
  ModelRunner runner(*model, cache, 32);
  const std::vector<BlockId> table = {0, 1, 2, 3, 4, 5, 6};
  const std::vector<int> one = {3};
  const SequenceChunk too_far{one, config.context, table};
  expect_error(
      [&] {
        runner.run({&too_far, 1});
      },
      {"reaches position 96", "the model's context is 96 positions",
       "longer than the model can read"});
  const SequenceChunk short_table{one, 40, std::span(table).first(2)};
  expect_error(
      [&] {
        runner.run({&short_table, 1});
      },
      "covers 41 positions, which need 3 blocks of 16, but its block table has 2");
  const std::vector<int> bad_token = {50};
  const SequenceChunk outside{bad_token, 0, table};
  expect_error([&] { runner.run({&outside, 1}); }, "token 50, outside the vocabulary 0..49");
  const std::vector<int> many(33, 1);
  const SequenceChunk too_many{many, 0, table};
  expect_error(
      [&] {
        runner.run({&too_many, 1});
      },
      "33 new tokens in this step; the runner was made for 1..32");
  const std::vector<BlockId> foreign = {99};
  const SequenceChunk outside_cache{one, 0, foreign};
  expect_error(
      [&] {
        runner.run({&outside_cache, 1});
      },
      "block 0 is 99, outside the cache's 0..15");
  PagedKvCache other(KvShape{2, 4, 8}, 4, 16);
  expect_error([&] { ModelRunner wrong(*model, other, 8); },
               "the cache is shaped for 2 layers × 4 heads × 8, the model needs 3 × 4 × 8");
  train::Model<float> stage(config, 1, {train::ModelPart(0, 2)});
  expect_error([&] { ModelRunner part(stage, cache, 8); }, "serves a whole model on one device");
}

}  // namespace
}  // namespace book::kv
