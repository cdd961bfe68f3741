// The speculative stage's engine section: chapter 11's continuous batching with and without
// speculation (SpecEngine) on the memory-bound random pair, at a few concurrencies.
#include <algorithm>

#include "chapters/10_paged_attention/served_model.h"
#include "chapters/11_continuous_batching/engine.h"
#include "chapters/13_disaggregation_speculation/spec_engine.h"
#include "chapters/13_disaggregation_speculation/spec_report.h"
#include "common/check.h"
#include "common/rng.h"
#include "common/timer.h"

namespace book::spec {

Table run_engine_concurrency(int target_layers, int target_width,
                             const std::vector<int>& concurrencies, int gamma, int new_tokens) {
  train::Config tc;  // the shapes and seeds of measure_step_costs's pair
  tc.vocab_size = 512, tc.context = 64, tc.n_layer = target_layers, tc.d_model = target_width;
  tc.n_head = std::max(1, target_width / 64);
  train::Config dc = tc;
  dc.n_layer = 1, dc.d_model = 256, dc.n_head = 4;
  const int max_c = *std::max_element(concurrencies.begin(), concurrencies.end());
  const int budget = max_c * (gamma + 1);
  const int blocks = max_c * ((8 + new_tokens + gamma) / 16 + 2);  // room for all: no preemption
  auto target = make_stack(kv::random_model(tc, 7), blocks, 16, budget);
  auto draft = make_stack(kv::random_model(dc, 8), blocks, 16, budget);
  Table table({"concurrency", "requests", "plain tok/s", "speculative tok/s", "speed-up", "alpha",
               "target steps plain", "target steps spec", "mean rows/step spec"});
  Rng rng(77);
  {  // warm-up: the first steps touch the caches' pages and the weights
    serve::GenerationRequest r;
    r.prompt = {1, 2, 3};
    r.max_tokens = 4;
    serve::Engine warm(*target.runner, *target.blocks, {1, gamma + 1});
    warm.submit(r);
    warm.run();
    SpecEngine spec(target.served(), draft.served(), {{1, gamma + 1}, gamma});
    spec.submit(r);
    spec.run();
  }
  for (const int c : concurrencies) {
    // Twice the concurrency, so half the requests are admitted mid-run as others finish.
    std::vector<serve::GenerationRequest> requests(2 * c);
    for (auto& r : requests) {
      r.prompt.resize(8);
      for (int& t : r.prompt) t = static_cast<int>(rng.uniform() * tc.vocab_size);
      r.max_tokens = new_tokens;
    }
    serve::SchedulerConfig config;
    config.max_running = c;
    config.token_budget = c * (gamma + 1);  // the same budget for both
    serve::Engine plain(*target.runner, *target.blocks, config);
    for (const auto& r : requests) plain.submit(r);
    Timer plain_timer;
    const auto plain_out = plain.run();
    const double plain_s = plain_timer.seconds();
    SpecEngine spec(target.served(), draft.served(), {config, gamma});
    for (const auto& r : requests) spec.submit(r);
    Timer spec_timer;
    std::int64_t rows = 0;
    while (spec.has_work()) rows += spec.step().rows();
    const auto spec_out = spec.run();
    const double spec_s = spec_timer.seconds();
    BOOK_CHECK(spec_out.size() == plain_out.size(), "engine section: completions differ");
    for (std::size_t i = 0; i < spec_out.size(); ++i)
      BOOK_CHECK(spec_out[i].tokens == plain_out[i].tokens,
                 "engine section: request " << i << "'s speculative output differs");
    const double tokens = static_cast<double>(requests.size()) * new_tokens;
    const double alpha =
        spec.proposed() ? static_cast<double>(spec.accepted()) / spec.proposed() : 0;
    table.add_row({std::to_string(c), std::to_string(requests.size()), fixed(tokens / plain_s, 0),
                   fixed(tokens / spec_s, 0), fixed(plain_s / spec_s, 2) + "x", fixed(alpha, 2),
                   std::to_string(plain.steps()), std::to_string(spec.steps()),
                   fixed(static_cast<double>(rows) / spec.steps(), 1)});
  }
  return table;
}

}  // namespace book::spec
