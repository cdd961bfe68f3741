/// @file
/// Exercise serve.chunked_prefill: how much of a prompt runs in this step.
#pragma once

#include "chapters/11_continuous_batching/scheduler_state.h"

namespace book::serve {

/// Exercise serve.chunked_prefill: the prompt positions a prefilling request runs this step,
/// given `remaining` positions still to compute and `budget_left` rows left in the step:
/// - with config.chunked_prefill, as many as fit: min(remaining, budget_left);
/// - without, the whole remainder if it fits, else 0 (the prompt waits for a step with room).
/// Never negative; 0 when budget_left <= 0. Throws book::Error if remaining < 1.
/// \exercise{serve.chunked_prefill}
int chunked_prefill(int remaining, int budget_left, const SchedulerConfig& config);

}  // namespace book::serve
