/// @file
/// Exercise serve.schedule_step: one iteration of continuous batching's scheduler.
#pragma once

#include "chapters/10_paged_attention/block_manager.h"
#include "chapters/11_continuous_batching/scheduler_state.h"

namespace book::serve {

/// Exercise serve.schedule_step: plans one model step within `config`, changing `state` and
/// `blocks` as it goes:
/// 1. Decodes first, oldest running request first: each running request whose whole prefix is
///    in the cache (blocks.computed(id) == blocks.length(id)) gets one row, its last sampled token
///    (append it with blocks.append_token; record a copy-on-write copy in plan.copies). When
///    blocks.can_append(id) is false, preempt (preempt.h) the newest running request and record
///    it in plan.preempted, until the append fits; if the request itself was the newest, it is
///    preempted and the decode pass ends.
/// 2. Then prefill: running requests still prefilling (oldest first), then, only if nothing was
///    preempted this step, waiting requests in order while fewer than max_running run, each
///    admitted with blocks.add_sequence(id, its tokens) (stop at the first that does not fit:
///    first come, first served). Each gets chunked_prefill(...) tokens (chunked_prefill.h) of
///    what remains of the token budget; a request just admitted whose chunk is 0 is freed again
///    and put back. A chunk that reaches the request's last token samples.
/// Returns the plan; its chunks' counts sum to at most config.token_budget. Throws book::Error
/// if the config is invalid (check_config).
/// \exercise{serve.schedule_step}
StepPlan schedule_step(SchedulerState& state, kv::BlockManager& blocks,
                       const SchedulerConfig& config);

}  // namespace book::serve
