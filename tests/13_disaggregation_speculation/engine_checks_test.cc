// SpecEngine refuses bad input with book::Error: gamma <= 0 or past the context and a draft of
// another vocabulary (speculative.h's checks), a budget that cannot verify every running request
// at once, chunked prefill off, a sampled request, a token outside the vocabulary, max_tokens 0.
// Scaffolding, not an exercise: it passes on either track.
#include <gtest/gtest.h>

#include <vector>

#include "chapters/10_paged_attention/served_model.h"
#include "chapters/13_disaggregation_speculation/spec_engine.h"
#include "common/check.h"

namespace book::spec {
namespace {

serve::GenerationRequest request(std::vector<int> prompt, int max_tokens) {
  serve::GenerationRequest r;
  r.prompt = std::move(prompt);
  r.max_tokens = max_tokens;
  return r;
}

SpecEngineConfig config_of(int max_running, int token_budget, int gamma) {
  SpecEngineConfig config;
  config.scheduler.max_running = max_running;
  config.scheduler.token_budget = token_budget;
  config.gamma = gamma;
  return config;
}

TEST(SpecEngineChecks, BadInputIsRefused) {
  train::Config config;
  config.vocab_size = 16, config.context = 16, config.n_layer = 1, config.n_head = 2,
  config.d_model = 16;
  train::Config other = config;
  other.vocab_size = 17;
  auto target = make_stack(kv::random_model(config, 1), 32, 4, 32);
  auto draft = make_stack(kv::random_model(config, 2), 32, 4, 32);
  auto wrong = make_stack(kv::random_model(other, 3), 32, 4, 32);
  EXPECT_THROW(SpecEngine(target.served(), draft.served(), config_of(2, 16, 0)), Error);
  EXPECT_THROW(SpecEngine(target.served(), draft.served(), config_of(2, 16, -1)), Error);
  EXPECT_THROW(SpecEngine(target.served(), draft.served(), config_of(2, 16, 16)), Error);
  EXPECT_THROW(SpecEngine(target.served(), wrong.served(), config_of(2, 16, 2)), Error);
  // Two requests verifying 4 proposals need 10 rows; a budget of 9 cannot hold them.
  EXPECT_THROW(SpecEngine(target.served(), draft.served(), config_of(2, 9, 4)), Error);
  SpecEngineConfig unchunked = config_of(2, 16, 2);
  unchunked.scheduler.chunked_prefill = false;
  EXPECT_THROW(SpecEngine(target.served(), draft.served(), unchunked), Error);
  SpecEngine engine(target.served(), draft.served(), config_of(2, 16, 2));
  serve::GenerationRequest sampled = request({1, 2, 3}, 4);
  sampled.sampling.temperature = 1.0;
  EXPECT_THROW(engine.submit(sampled), Error);
  EXPECT_THROW(engine.submit(request({1, 16}, 4)), Error);
  EXPECT_THROW(engine.submit(request({1, 2}, 0)), Error);
}

}  // namespace
}  // namespace book::spec
