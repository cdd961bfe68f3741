// Reference body of serve.schedule_step.
#include "chapters/11_continuous_batching/schedule_step.h"

#include <algorithm>

#include "chapters/11_continuous_batching/chunked_prefill.h"
#include "chapters/11_continuous_batching/preempt.h"

namespace book::serve {

//! [schedule_step]
StepPlan schedule_step(SchedulerState& state, kv::BlockManager& blocks,
                       const SchedulerConfig& config) {
  check_config(config);
  StepPlan plan;
  int budget = config.token_budget;
  // 1. Decodes: one row per running request that has all its tokens but the last in the cache.
  for (std::size_t i = 0; i < state.running.size(); ++i) {
    const RequestId id = state.running[i];
    if (blocks.computed(id) < blocks.length(id)) continue;  // still prefilling: part 2
    bool preempted_itself = false;
    while (!blocks.can_append(id)) {
      const RequestId victim = preempt(state, blocks);  // the newest, maybe this one
      plan.preempted.push_back(victim);
      if (victim == id) {
        preempted_itself = true;
        break;
      }
    }
    if (preempted_itself) break;  // it was the last one running
    const Sequence& sequence = state.sequences.at(id);
    const kv::SlotReservation slot = blocks.append_token(id, sequence.tokens.back());
    if (slot.copy) plan.copies.push_back(*slot.copy);
    plan.chunks.push_back({id, blocks.length(id) - 1, 1, true, true});
    --budget;
  }
  // 2. Prefill chunks: running requests first, then admissions from the waiting queue.
  auto prefill = [&](RequestId id) {
    const int computed = blocks.computed(id), length = blocks.length(id);
    const int take = chunked_prefill(length - computed, budget, config);
    if (take > 0) {
      plan.chunks.push_back({id, computed, take, computed + take == length, false});
      budget -= take;
    }
    return take;
  };
  const std::size_t decodes = plan.chunks.size();
  for (const RequestId id : state.running) {
    const bool decoded = std::any_of(plan.chunks.begin(), plan.chunks.begin() + decodes,
                                     [&](const ScheduledChunk& c) { return c.id == id; });
    if (decoded || blocks.computed(id) == blocks.length(id)) continue;
    if (budget <= 0 || prefill(id) == 0) break;
  }
  while (plan.preempted.empty() && budget > 0 && !state.waiting.empty() &&
         static_cast<int>(state.running.size()) < config.max_running) {
    const RequestId id = state.waiting.front();
    if (!blocks.add_sequence(id, state.sequences.at(id).tokens).ok) break;  // wait for blocks
    if (prefill(id) == 0) {
      blocks.free(id);  // does not fit this step unchunked: admit it later
      break;
    }
    state.waiting.pop_front();
    state.running.push_back(id);
    plan.admitted.push_back(id);
  }
  return plan;
}
//! [schedule_step]

}  // namespace book::serve
