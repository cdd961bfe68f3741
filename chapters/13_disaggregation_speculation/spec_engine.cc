// Speculative decoding as an option of continuous batching: chapter 11's Scheduler plans the
// step with γ_i rows per decode request held back from its budget, the draft proposes for every
// decode request in one batch per proposal, the target verifies every request (and runs every
// prefill chunk) in one pass, and the greedy rule decides what each request keeps.
#include "chapters/13_disaggregation_speculation/spec_engine.h"

#include <algorithm>

#include "chapters/13_disaggregation_speculation/speculative.h"
#include "common/check.h"

namespace book::spec {

SpecEngine::SpecEngine(ServedModel target, ServedModel draft, const SpecEngineConfig& config)
    : target_(target),
      draft_(draft),
      config_(config),
      scheduler_(target.blocks, config.scheduler, target.runner.config().context) {
  const auto& t = target.runner.config();
  const auto& d = draft.runner.config();
  check_same_vocabulary(t.vocab_size, d.vocab_size);
  check_gamma(config.gamma, t.context);
  check_gamma(config.gamma, d.context);
  BOOK_CHECK(d.context >= t.context, "SpecEngine: the draft's context of "
                                         << d.context << " positions is shorter than the target's "
                                         << t.context);
  const serve::SchedulerConfig& s = config.scheduler;
  BOOK_CHECK(s.chunked_prefill,
             "SpecEngine: needs chunked prefill (the budget left to the "
             "scheduler shrinks from step to step)");
  BOOK_CHECK(s.preemption == serve::PreemptionMode::kRecompute,
             "SpecEngine: preempts by recompute only (the draft's cache has no host arena)");
  BOOK_CHECK(static_cast<std::int64_t>(s.max_running) * (config.gamma + 1) <= s.token_budget,
             "SpecEngine: a token budget of "
                 << s.token_budget << " cannot verify " << s.max_running
                 << " requests of gamma + 1 = " << config.gamma + 1
                 << " rows in one step; raise it to at least " << s.max_running * (config.gamma + 1)
                 << " or lower max_running");
  for (const ServedModel* m : {&target_, &draft_}) {
    BOOK_CHECK(m->runner.max_rows() >= s.token_budget,
               "SpecEngine: a runner takes " << m->runner.max_rows()
                                             << " rows per step, below the token budget of "
                                             << s.token_budget);
    BOOK_CHECK(m->blocks.block_size() == m->runner.cache().block_size() &&
                   m->blocks.num_blocks() == m->runner.cache().num_blocks(),
               "SpecEngine: a block manager does not describe its runner's cache");
  }
  BOOK_CHECK(draft.blocks.sequences().empty(), "SpecEngine: the draft's manager is not empty");
}

serve::RequestId SpecEngine::submit(const serve::GenerationRequest& request) {
  BOOK_CHECK(request.sampling.temperature == 0,
             "SpecEngine: serves greedy requests only (temperature 0), got temperature "
                 << request.sampling.temperature
                 << "; the sampling rule runs in SpeculativeDecoder");
  const int vocab = target_.runner.config().vocab_size;
  for (const auto* list : {&request.prompt, &request.stop_tokens})
    for (const int token : *list)
      BOOK_CHECK(token >= 0 && token < vocab, "SpecEngine::submit: token "
                                                  << token << " is outside the vocabulary [0, "
                                                  << vocab << ")");
  const serve::RequestId id = scheduler_.add(request.prompt, request.max_tokens);
  requests_.emplace(id, request);
  return id;
}

int SpecEngine::gamma_for(serve::RequestId id) const {
  const serve::Sequence& sequence = scheduler_.sequence(id);
  // Never propose past the last token: it comes from the target as the pass's own token.
  return std::max(0, std::min(config_.gamma, sequence.max_tokens - sequence.generated() - 1));
}

std::vector<serve::Completion> SpecEngine::run() {
  while (has_work()) step();
  std::vector<serve::Completion> out;
  for (auto& [id, completion] : finished_) out.push_back(std::move(completion));
  finished_.clear();
  return out;
}

}  // namespace book::spec
