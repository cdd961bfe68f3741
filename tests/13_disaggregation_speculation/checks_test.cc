// Bad input gets a book::Error naming the value: gamma out of range, a draft with another
// vocabulary, distributions that are not distributions. And the seam chapter 13 added to chapter
// 10's block manager: truncate frees the blocks past the kept tokens and keeps every invariant.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "chapters/10_paged_attention/served_model.h"
#include "chapters/13_disaggregation_speculation/spec_decoder.h"
#include "chapters/13_disaggregation_speculation/speculative.h"
#include "common/testing/expect_error.h"

namespace book::spec {
namespace {

using book::testing::expect_error;

TEST(Checks, Gamma) {
  check_gamma(1, 8);
  check_gamma(7, 8);
  expect_error([] { check_gamma(0, 8); }, "gamma (draft tokens per step) must be >= 1, got 0");
  expect_error([] { check_gamma(-3, 8); }, "got -3");
  expect_error([] { check_gamma(8, 8); }, {"gamma = 8 needs 9 positions", "context is 8"});
}

TEST(Checks, Distributions) {
  check_distribution(std::vector<double>{0.25, 0.75}, "p");
  expect_error([] { check_distribution(std::vector<double>{}, "p"); }, "p is empty");
  expect_error(
      [] {
        check_distribution(std::vector<double>{0.5, std::nan("")}, "q");
      },
      "q[1] = nan is not a probability");
  expect_error(
      [] {
        check_distribution(std::vector<double>{1.5, -0.5}, "p");
      },
      "p[1] = -0.5 is not a probability");
  expect_error([] { check_distribution(std::vector<double>{0.4, 0.4}, "p"); }, "p sums to 0.8");
  expect_error([] { sample_index(std::vector<double>{1.0}, 1.0); }, "got 1");
}

train::Config tiny(int vocab) {
  train::Config c;
  c.vocab_size = vocab, c.context = 16, c.n_layer = 1, c.n_head = 2, c.d_model = 8;
  return c;
}

TEST(Checks, DecoderRefusesADifferentVocabularyAndABadGamma) {
  auto target = make_stack(kv::random_model(tiny(12), 1), 16, 4, 8);
  auto draft = make_stack(kv::random_model(tiny(13), 2), 16, 4, 8);
  expect_error([&] { SpeculativeDecoder(target.served(), draft.served(), {}); },
               {"draft's vocabulary has 13 tokens", "target's has 12"});
  auto same = make_stack(kv::random_model(tiny(12), 2), 16, 4, 8);
  expect_error([&] { SpeculativeDecoder(target.served(), same.served(), {.gamma = 0}); }, "got 0");
  expect_error([&] { SpeculativeDecoder(target.served(), same.served(), {.gamma = 16}); },
               "context is 16");
  expect_error([&] { SpeculativeDecoder(target.served(), same.served(), {.gamma = 8}); },
               "needs a target runner of 9 rows per step, it has 8");
  SpeculativeDecoder decoder(target.served(), same.served(), {.gamma = 3});
  expect_error(
      [&] {
        decoder.generate(std::vector<int>{1, 2, 3}, 15, 0);
      },
      "passes the context of 16");
  expect_error([&] { decoder.generate(std::vector<int>{}, 2, 0); }, "prompt is empty");
}

TEST(Checks, SelfDraftIsTheTargetsFirstLayers) {
  train::Config config = tiny(12);
  config.n_layer = 3;
  auto target = kv::random_model(config, 9);
  auto draft = self_draft(*target, 2);
  EXPECT_EQ(draft->config().n_layer, 2);
  for (const std::string name : {"wte", "wpe", "h0.w_qkv", "h1.w_proj", "lnf_gain"}) {
    const auto& from = target->layout().find(name);
    const auto& to = draft->layout().find(name);
    ASSERT_EQ(from.size(), to.size()) << name;
    for (std::size_t i = 0; i < from.size(); ++i)
      ASSERT_EQ(target->params()[from.offset + i], draft->params()[to.offset + i]) << name;
  }
  EXPECT_FALSE(draft->layout().contains("h2.w_qkv"));
  expect_error([&] { self_draft(*target, 0); }, "keeps 1 to 2 of the target's 3 layers, not 0");
  expect_error([&] { self_draft(*target, 3); }, "not 3");
}

TEST(Checks, TruncateFreesTheBlocksOfRejectedTokens) {
  kv::BlockManager blocks(8, 2);
  const std::vector<int> prompt = {1, 2, 3};
  ASSERT_TRUE(blocks.add_sequence(0, prompt).ok);
  blocks.mark_computed(0, 3);
  for (const int t : {4, 5, 6, 7}) ASSERT_TRUE(blocks.append_token(0, t).ok);
  blocks.mark_computed(0, 7);
  EXPECT_EQ(blocks.num_used_blocks(), 4);  // 7 tokens in blocks of 2
  blocks.truncate(0, 4);                   // proposals 5, 6, 7 rejected
  blocks.check_invariants();
  EXPECT_EQ(blocks.num_used_blocks(), 2);
  EXPECT_EQ(blocks.length(0), 4);
  EXPECT_EQ(blocks.computed(0), 4);
  blocks.truncate(0, 3);  // into a full block the prefix cache named: it must leave the cache
  blocks.check_invariants();
  ASSERT_TRUE(blocks.append_token(0, 9).ok);  // the slot of 4 gets 9
  blocks.mark_computed(0, 4);
  blocks.check_invariants();
  expect_error([&] { blocks.truncate(0, 0); }, "cannot keep 0");
  expect_error([&] { blocks.truncate(0, 5); }, "has 4 tokens; cannot keep 5");
  expect_error([&] { blocks.truncate(42, 1); }, "unknown sequence 42");
  blocks.free(0);
  EXPECT_EQ(blocks.num_used_blocks(), 0);
}

}  // namespace
}  // namespace book::spec
