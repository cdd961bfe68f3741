// Exercise serve.chunked_prefill: write chunked_prefill of
// chapters/11_continuous_batching/chunked_prefill.h.
//
// remaining < 1 is a book::Error. With budget_left <= 0 return 0. With config.chunked_prefill
// return as much as fits, min(remaining, budget_left); without it, the whole remainder if it fits
// in budget_left, else 0 (the prompt waits for a step with room).
// Test: bazel test --config=exercises //tests/11_continuous_batching:chunked_prefill_test
#include "chapters/11_continuous_batching/chunked_prefill.h"

#include "common/check.h"

namespace book::serve {

int chunked_prefill(int remaining, int budget_left, const SchedulerConfig& config) {
  (void)remaining, (void)budget_left, (void)config;
  BOOK_NOT_IMPLEMENTED("serve.chunked_prefill",
                       "exercises/11_continuous_batching/chunked_prefill.cc",
                       "chapters/11_continuous_batching/README.md, section Chunked prefill");
}

}  // namespace book::serve
