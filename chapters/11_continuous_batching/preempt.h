/// @file
/// Exercise serve.preempt: preemption by recompute.
#pragma once

#include "chapters/10_paged_attention/block_manager.h"
#include "chapters/11_continuous_batching/scheduler_state.h"

namespace book::serve {

/// Exercise serve.preempt: evicts the newest running request (the back of state.running, the
/// one that has waited least): frees all its blocks in `blocks`, removes it from running and puts
/// it at the front of waiting, and counts the preemption in its Sequence. Its tokens stay as they
/// are (prompt plus everything sampled), so when it is admitted again their keys and values are
/// recomputed by one prefill, and it continues where it stopped: recompute, not swap. Returns
/// its id. Throws book::Error if nothing is running.
/// \exercise{serve.preempt}
RequestId preempt(SchedulerState& state, kv::BlockManager& blocks);

}  // namespace book::serve
