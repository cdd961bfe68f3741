// Graded tests of speculative decoding inside continuous batching (spec_engine.h): every
// request's greedy output through the engine equals the same request served alone by the plain
// target, with more requests than run at once (admissions mid-run) and a KV cache small enough
// that requests are preempted; the block managers' invariants hold after every step and every
// block is free at the end; no step passes the token budget, proposals included. Bad input:
// engine_checks_test.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "chapters/04_training_baseline/data.h"
#include "chapters/10_paged_attention/served_model.h"
#include "chapters/13_disaggregation_speculation/spec_engine.h"
#include "common/check.h"
#include "common/rng.h"
#include "common/testing/exercise.h"

namespace book::spec {
namespace {

const std::string kTarget = "chapters/10_paged_attention/addition_checkpoint.bin";
const std::string kDraft = "chapters/13_disaggregation_speculation/draft_checkpoint.bin";

serve::GenerationRequest request(std::vector<int> prompt, int max_tokens) {
  serve::GenerationRequest r;
  r.prompt = std::move(prompt);
  r.max_tokens = max_tokens;
  return r;
}

struct Run {
  std::int64_t preemptions = 0, proposed = 0, accepted = 0;
  int max_rows = 0;    // the largest step seen
  bool mixed = false;  // a step verified proposals and ran prefill chunks together
};

// Serves `prompts` through a SpecEngine on `target` and `draft` and checks each output against
// plain_greedy on `reference` (the same target weights, its own roomy cache).
Run expect_same_as_alone(ModelStack& target, ModelStack& draft, ModelStack& reference,
                         const std::vector<std::vector<int>>& prompts, int max_tokens,
                         const SpecEngineConfig& config) {
  SpecEngine engine(target.served(), draft.served(), config);
  std::vector<serve::RequestId> ids;
  for (const auto& prompt : prompts) ids.push_back(engine.submit(request(prompt, max_tokens)));
  Run run;
  std::vector<serve::Completion> done;
  while (engine.has_work()) {
    const SpecStepRecord step = engine.step();
    EXPECT_LE(step.rows(), config.scheduler.token_budget)
        << "step " << step.step << ": " << step.verify_rows << " verification rows + "
        << step.prefill_rows << " prefill rows pass the budget";
    EXPECT_EQ(step.verify_rows, step.decodes + step.proposed)
        << "step " << step.step << ": each decode verifies its proposals and its last token";
    EXPECT_LE(step.accepted, step.proposed);
    run.max_rows = std::max(run.max_rows, step.rows());
    run.mixed |= step.proposed > 0 && step.prefill_rows > 0;
  }
  const auto completions = engine.run();  // nothing left to step: the finished ones
  EXPECT_EQ(completions.size(), prompts.size());
  for (const serve::Completion& c : completions) {
    const auto expected = plain_greedy(reference.served(), prompts[c.id], max_tokens, 1000);
    EXPECT_EQ(c.tokens, expected) << "gamma " << config.gamma << ", request " << c.id << " of "
                                  << prompts.size() << " (preempted " << c.preemptions
                                  << " times) differs from the target alone";
  }
  EXPECT_EQ(target.blocks->num_used_blocks(), 0) << "target blocks left at the end";
  EXPECT_EQ(draft.blocks->num_used_blocks(), 0) << "draft blocks left at the end";
  run.preemptions = engine.scheduler().preemptions();
  run.proposed = engine.proposed(), run.accepted = engine.accepted();
  return run;
}

SpecEngineConfig config_of(int max_running, int token_budget, int gamma) {
  SpecEngineConfig config;
  config.scheduler.max_running = max_running;
  config.scheduler.token_budget = token_budget;
  config.gamma = gamma;
  config.check_blocks = true;
  return config;
}

EXERCISE_TEST("spec.verify_greedy", SpecEngine, TrainedPairEqualsTheTargetAloneUnderPreemption) {
  auto reference = make_stack(kv::load_checkpoint_model(kv::runfile(kTarget)), 64, 2, 32);
  const train::AdditionTask task(kv::addition_digits(reference.model->config()));
  Rng rng(41);
  std::vector<std::vector<int>> prompts;
  for (int i = 0; i < 24; ++i) {
    const auto [a, b] = task.sample(rng, train::Split::kValidation);
    auto tokens = task.encode(a, b);
    tokens.resize(task.prompt_length());
    prompts.push_back(tokens);
  }
  std::int64_t preemptions = 0, accepted = 0;
  for (const int gamma : {1, 2, 3}) {
    // 10 blocks of 2 tokens for 4 running requests of up to 8 positions: some are preempted.
    auto target = make_stack(kv::load_checkpoint_model(kv::runfile(kTarget)), 10, 2, 32);
    auto draft = make_stack(kv::load_checkpoint_model(kv::runfile(kDraft)), 10, 2, 32);
    const Run run = expect_same_as_alone(target, draft, reference, prompts, task.answer_length(),
                                         config_of(4, 4 * (gamma + 1), gamma));
    preemptions += run.preemptions, accepted += run.accepted;
  }
  EXPECT_GT(preemptions, 0) << "the small cache never preempted: the test lost its teeth";
  EXPECT_GT(accepted, 0) << "the trained draft never agreed with the target";
}

EXERCISE_TEST("spec.verify_greedy", SpecEngine, RandomModelsLongOutputsManyRequests) {
  train::Config config;
  config.vocab_size = 16, config.context = 48, config.n_layer = 2, config.n_head = 2,
  config.d_model = 32;
  train::Config small = config;
  small.n_layer = 1, small.d_model = 16;
  Rng rng(7);
  std::vector<std::vector<int>> prompts;
  for (int i = 0; i < 10; ++i) {
    std::vector<int> prompt(2 + (i * 5) % 17);
    for (int& t : prompt) t = static_cast<int>(rng.uniform() * config.vocab_size);
    prompts.push_back(prompt);
  }
  auto reference = make_stack(kv::random_model(config, 1), 256, 4, 64);
  for (const int gamma : {1, 4, 7}) {
    // A different random draft (mostly rejected) and the target's twin (always accepted), on a
    // cache of 16 blocks of 4 for 3 running requests of up to 38 positions.
    auto target = make_stack(kv::random_model(config, 1), 16, 4, 64);
    auto other = make_stack(kv::random_model(small, 2), 16, 4, 64);
    const Run a = expect_same_as_alone(target, other, reference, prompts, 20,
                                       config_of(3, 3 * (gamma + 1) + 5, gamma));
    auto twin = make_stack(kv::random_model(config, 1), 16, 4, 64);
    const Run b = expect_same_as_alone(target, twin, reference, prompts, 20,
                                       config_of(3, 3 * (gamma + 1) + 5, gamma));
    EXPECT_EQ(b.accepted, b.proposed) << "gamma " << gamma << ": a twin draft must always agree";
    EXPECT_GT(b.proposed, 0);
    EXPECT_GT(a.preemptions + b.preemptions, 0) << "gamma " << gamma << ": nothing preempted";
    EXPECT_TRUE(a.mixed || b.mixed)
        << "gamma " << gamma << ": no step verified proposals beside a prefill chunk";
  }
}

EXERCISE_TEST("spec.verify_greedy", SpecEngine, StopTokensCutAcceptedProposals) {
  // The target's twin as the draft: every proposal is accepted, so a stop token usually lands
  // inside a step's accepted run, and nothing after it may reach the output.
  train::Config config;
  config.vocab_size = 16, config.context = 48, config.n_layer = 2, config.n_head = 2,
  config.d_model = 32;
  auto reference = make_stack(kv::random_model(config, 3), 256, 4, 64);
  auto target = make_stack(kv::random_model(config, 3), 64, 4, 64);
  auto twin = make_stack(kv::random_model(config, 3), 64, 4, 64);
  SpecEngine engine(target.served(), twin.served(), config_of(3, 3 * 5, 4));
  Rng rng(9);
  std::vector<std::vector<int>> expected;
  for (int i = 0; i < 8; ++i) {
    std::vector<int> prompt(3 + i);
    for (int& t : prompt) t = static_cast<int>(rng.uniform() * config.vocab_size);
    const auto alone = plain_greedy(reference.served(), prompt, 20, 1000);
    serve::GenerationRequest r = request(prompt, 20);
    r.stop_tokens = {alone[static_cast<std::size_t>(2 + i)]};
    const auto stop = std::find(alone.begin(), alone.end(), r.stop_tokens.front());
    expected.emplace_back(alone.begin(), stop + 1);
    engine.submit(r);
  }
  for (const serve::Completion& c : engine.run()) {
    EXPECT_EQ(c.tokens, expected[c.id]) << "request " << c.id << " with a stop token";
    EXPECT_EQ(c.reason, serve::FinishReason::kStop) << "request " << c.id;
  }
  EXPECT_GT(engine.accepted(), 0);
  EXPECT_EQ(target.blocks->num_used_blocks(), 0);
  EXPECT_EQ(twin.blocks->num_used_blocks(), 0);
}

}  // namespace
}  // namespace book::spec
