// Exercise mem.adam_8bit_step — write adam8bit_step (declared in
// chapters/09_memory_accounting/adam_8bit.h): check that params, grads and the state's codes have
// the same size (a book::Error naming the sizes); increment state.step; for each block of
// state.block elements (the last may be shorter), decode m (dequantize_signed) and v
// (dequantize_log) into FP32 scratch, call train::adamw_step on the block's params, grads and
// scratch with state.step, and encode the scratch back (quantize_signed, quantize_log), keeping
// the returned scales.
// Graded by tests/09_memory_accounting/adam_8bit_test.cc:
//   bazel test --config=exercises //tests/09_memory_accounting:adam_8bit_test
#include "chapters/09_memory_accounting/adam_8bit.h"

#include "common/check.h"

namespace book::mem {

void adam8bit_step(std::span<float> params, std::span<const float> grads, Adam8bitState& state,
                   float lr, const train::AdamWConfig& config) {
  state.check_consistent("adam8bit_step");  // given: the state's codes and scales fit
  (void)params, (void)grads, (void)state, (void)lr, (void)config;
  BOOK_NOT_IMPLEMENTED("mem.adam_8bit_step", "exercises/09_memory_accounting/adam_8bit.cc",
                       "chapters/09_memory_accounting/README.md, section 8-bit Adam");
}

}  // namespace book::mem
