// Reference body of serve.preempt.
#include "chapters/11_continuous_batching/preempt.h"

#include "common/check.h"

namespace book::serve {

//! [preempt]
RequestId preempt(SchedulerState& state, kv::BlockManager& blocks) {
  BOOK_CHECK(!state.running.empty(), "preempt: nothing is running, so nothing can be preempted");
  const RequestId victim = state.running.back();  // the newest: it has waited least
  blocks.free(victim);                            // all its KV is dropped ...
  state.running.pop_back();
  state.waiting.push_front(victim);  // ... and recomputed first when blocks free up
  ++state.sequences.at(victim).preemptions;
  return victim;
}
//! [preempt]

}  // namespace book::serve
