// Exercise serve.preempt: write preempt of chapters/11_continuous_batching/preempt.h.
//
// Nothing running is a book::Error. Otherwise take the newest running request (the back of
// state.running), free its blocks (blocks.free), remove it from running, push it at the FRONT of
// state.waiting, add one to its Sequence's preemptions, and return its id. Leave its tokens
// alone: re-admitting it recomputes their keys and values in one prefill.
// Test: bazel test --config=exercises //tests/11_continuous_batching:preempt_test
#include "chapters/11_continuous_batching/preempt.h"

#include "common/check.h"

namespace book::serve {

RequestId preempt(SchedulerState& state, kv::BlockManager& blocks) {
  (void)state, (void)blocks;
  BOOK_NOT_IMPLEMENTED(
      "serve.preempt", "exercises/11_continuous_batching/preempt.cc",
      "chapters/11_continuous_batching/README.md, section Preemption by recompute");
}

}  // namespace book::serve
