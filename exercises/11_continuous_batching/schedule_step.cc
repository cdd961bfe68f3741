// Exercise serve.schedule_step: write schedule_step of
// chapters/11_continuous_batching/schedule_step.h.
//
// check_config(config) first. Then, with budget = config.token_budget:
// 1. Decodes: for each running id in order whose blocks.computed(id) == blocks.length(id):
//    while !blocks.can_append(id), preempt(state, blocks) (preempt.h) and record the victim in
//    plan.preempted; if the victim was id itself, stop the decode pass. Otherwise
//    blocks.append_token(id, its last token) (record slot.copy in plan.copies if any), add the
//    chunk {id, length - 1, 1, samples = true, decode = true} and spend one row of the budget.
// 2. Prefill: running ids still prefilling (not the ones that just decoded: their append made
//    length exceed computed too), in order, get chunked_prefill(length - computed,
//    budget, config) rows (stop at a 0). Then, only if nothing was preempted, admit waiting ids
//    from the front while budget > 0 and fewer than max_running run: blocks.add_sequence(id,
//    tokens) (stop if not ok), chunked_prefill(...) (if 0, blocks.free(id) and stop), move the id
//    to running and plan.admitted. A prefill chunk samples when it reaches length.
// Test: bazel test --config=exercises //tests/11_continuous_batching:schedule_step_test
#include "chapters/11_continuous_batching/schedule_step.h"

#include "common/check.h"

namespace book::serve {

StepPlan schedule_step(SchedulerState& state, kv::BlockManager& blocks,
                       const SchedulerConfig& config) {
  (void)state, (void)blocks, (void)config;
  BOOK_NOT_IMPLEMENTED("serve.schedule_step", "exercises/11_continuous_batching/schedule_step.cc",
                       "chapters/11_continuous_batching/README.md, section The scheduler");
}

}  // namespace book::serve
