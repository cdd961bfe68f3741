// Graded tests of speculative decoding on real models: with the greedy rule the output is the
// target's greedy output token for token (chapter 4's trained addition model with a smaller
// trained draft, and random models with longer contexts, gamma = 1..8); both KV caches are rolled
// back after every round (the block managers' invariants hold, every block is free at the end);
// the sampling rule runs end to end.
#include <gtest/gtest.h>

#include <vector>

#include "chapters/04_training_baseline/data.h"
#include "chapters/10_paged_attention/served_model.h"
#include "chapters/13_disaggregation_speculation/spec_decoder.h"
#include "common/rng.h"
#include "common/testing/exercise.h"

namespace book::spec {
namespace {

const std::string kTarget = "chapters/10_paged_attention/addition_checkpoint.bin";
const std::string kDraft = "chapters/13_disaggregation_speculation/draft_checkpoint.bin";

// Block size 2: a round's rejected proposals cross block boundaries, so rollback frees blocks.
ModelStack stack_of(std::unique_ptr<train::Model<float>> model) {
  return make_stack(std::move(model), /*num_blocks=*/64, /*block_size=*/2, /*max_rows=*/16);
}

void expect_same_as_target(ModelStack& target, ModelStack& draft,
                           const std::vector<std::vector<int>>& prompts, int new_tokens,
                           int max_gamma, SpecResult* total = nullptr) {
  for (int gamma = 1; gamma <= max_gamma; ++gamma) {
    SpeculativeDecoder decoder(target.served(), draft.served(),
                               {.gamma = gamma, .check_blocks = true});
    for (std::size_t i = 0; i < prompts.size(); ++i) {
      const auto expected = plain_greedy(target.served(), prompts[i], new_tokens, 1000);
      const SpecResult got = decoder.generate(prompts[i], new_tokens, static_cast<int>(i));
      ASSERT_EQ(got.tokens, expected) << "gamma " << gamma << ", prompt " << i
                                      << ": speculative output differs from the target's greedy";
      EXPECT_EQ(target.blocks->num_used_blocks(), 0) << "target blocks left after the request";
      EXPECT_EQ(draft.blocks->num_used_blocks(), 0) << "draft blocks left after the request";
      EXPECT_LE(got.accepted, got.proposed);
      if (total) total->proposed += got.proposed, total->accepted += got.accepted;
    }
  }
}

EXERCISE_TEST("spec.verify_greedy", SpeculativeDecoding, TrainedPairEqualsTheTargetsGreedyOutput) {
  auto target = stack_of(kv::load_checkpoint_model(kv::runfile(kTarget)));
  auto draft = stack_of(kv::load_checkpoint_model(kv::runfile(kDraft)));
  const train::AdditionTask task(kv::addition_digits(target.model->config()));
  Rng rng(31);
  std::vector<std::vector<int>> prompts;
  for (int i = 0; i < 40; ++i) {
    const auto [a, b] = task.sample(rng, train::Split::kValidation);
    auto tokens = task.encode(a, b);
    tokens.resize(task.prompt_length());
    prompts.push_back(tokens);
  }
  SpecResult total;
  // The answer fills the context: gamma up to context − 1 is allowed (fewer near the end).
  expect_same_as_target(target, draft, prompts, task.answer_length(),
                        target.model->config().context - 1, &total);
  EXPECT_GT(total.accepted, 0) << "the trained draft never agreed with the target";
}

EXERCISE_TEST("spec.verify_greedy", SpeculativeDecoding, SelfDraftEqualsTheTargetsGreedyOutput) {
  // The target's first layer with its head: a poor draft (no training for the early exit), but
  // the output must still be exactly the target's.
  auto target = stack_of(kv::load_checkpoint_model(kv::runfile(kTarget)));
  auto self = stack_of(self_draft(*target.model, target.model->config().n_layer - 1));
  const train::AdditionTask task(kv::addition_digits(target.model->config()));
  Rng rng(32);
  std::vector<std::vector<int>> prompts;
  for (int i = 0; i < 20; ++i) {
    const auto [a, b] = task.sample(rng, train::Split::kValidation);
    auto tokens = task.encode(a, b);
    tokens.resize(task.prompt_length());
    prompts.push_back(tokens);
  }
  expect_same_as_target(target, self, prompts, task.answer_length(),
                        target.model->config().context - 1);
}

EXERCISE_TEST("spec.verify_greedy", SpeculativeDecoding, RandomModelsWithLongOutputs) {
  train::Config config;
  config.vocab_size = 16, config.context = 48, config.n_layer = 2, config.n_head = 2,
  config.d_model = 32;
  train::Config small = config;
  small.n_layer = 1, small.d_model = 16;
  Rng rng(5);
  std::vector<std::vector<int>> prompts;
  for (int i = 0; i < 6; ++i) {
    std::vector<int> prompt(3 + i * 3);
    for (int& t : prompt) t = static_cast<int>(rng.uniform() * config.vocab_size);
    prompts.push_back(prompt);
  }
  // A different random draft (mostly rejected), and the target as its own draft (all accepted).
  auto target = stack_of(kv::random_model(config, 1));
  auto other = stack_of(kv::random_model(small, 2));
  auto self = stack_of(kv::random_model(config, 1));
  expect_same_as_target(target, other, prompts, 20, 8);
  SpecResult total;
  expect_same_as_target(target, self, prompts, 20, 8, &total);
  EXPECT_EQ(total.accepted, total.proposed) << "a draft equal to the target must always agree";
}

EXERCISE_TEST("spec.verify_greedy", SpeculativeDecoding, BatchesEqualTheTargetAlone) {
  // Many requests speculating together, of different lengths, in one draft batch and one target
  // pass per round (split over max_rows 16), with every block checked after every round.
  train::Config config;
  config.vocab_size = 16, config.context = 40, config.n_layer = 2, config.n_head = 2,
  config.d_model = 32;
  train::Config small = config;
  small.n_layer = 1, small.d_model = 16;
  auto target = make_stack(kv::random_model(config, 11), 256, 2, 16);
  auto draft = make_stack(kv::random_model(small, 12), 256, 2, 16);
  Rng rng(6);
  std::vector<std::vector<int>> prompts;
  for (int i = 0; i < 7; ++i) {
    std::vector<int> prompt(1 + i * 2);
    for (int& t : prompt) t = static_cast<int>(rng.uniform() * config.vocab_size);
    prompts.push_back(prompt);
  }
  for (const int gamma : {1, 3, 7}) {
    SpeculativeDecoder decoder(target.served(), draft.served(),
                               {.gamma = gamma, .check_blocks = true});
    const auto batch = decoder.generate_batch(prompts, 18, 100);
    ASSERT_EQ(batch.size(), prompts.size());
    for (std::size_t i = 0; i < prompts.size(); ++i)
      EXPECT_EQ(batch[i].tokens, plain_greedy(target.served(), prompts[i], 18, 1000))
          << "gamma " << gamma << ", request " << i << " of a batch of " << prompts.size();
    EXPECT_EQ(target.blocks->num_used_blocks(), 0);
    EXPECT_EQ(draft.blocks->num_used_blocks(), 0);
  }
}

EXERCISE_TEST("spec.rejection_sample", SpeculativeDecoding, SamplingRunsAndRollsBack) {
  // Random models would not do here: with a tied head both prefer repeating the last token, so
  // they always agree. The trained pair at temperature 1 disagrees now and then.
  auto target = stack_of(kv::load_checkpoint_model(kv::runfile(kTarget)));
  auto draft = stack_of(kv::load_checkpoint_model(kv::runfile(kDraft)));
  const train::AdditionTask task(kv::addition_digits(target.model->config()));
  for (const int gamma : {1, 2}) {
    SpeculativeDecoder decoder(
        target.served(), draft.served(),
        {.gamma = gamma, .temperature = 1.0, .seed = 99, .check_blocks = true});
    Rng rng(8);
    SpecResult total;
    for (int i = 0; i < 60; ++i) {
      const auto [a, b] = task.sample(rng, train::Split::kValidation);
      auto prompt = task.encode(a, b);
      prompt.resize(task.prompt_length());
      const SpecResult first = decoder.generate(prompt, task.answer_length(), i);
      const SpecResult again = decoder.generate(prompt, task.answer_length(), i);
      ASSERT_EQ(first.tokens.size(), static_cast<std::size_t>(task.answer_length()));
      EXPECT_EQ(first.tokens, again.tokens) << "the same seed must give the same tokens";
      total.proposed += first.proposed, total.accepted += first.accepted;
      EXPECT_EQ(target.blocks->num_used_blocks(), 0);
      EXPECT_EQ(draft.blocks->num_used_blocks(), 0);
    }
    EXPECT_GT(total.accepted, 0) << "gamma " << gamma;
    EXPECT_LT(total.accepted, total.proposed) << "gamma " << gamma << ": nothing was rejected";
  }
}

}  // namespace
}  // namespace book::spec
