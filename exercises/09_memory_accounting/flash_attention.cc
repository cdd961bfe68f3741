// Exercise mem.flash_attention_forward — write flash_attention_forward (declared in
// chapters/09_memory_accounting/flash_attention.h): causal attention in chapter 4's layout that
// never holds a T x T matrix. Call shape.check() first. Allocate the scratch as TrackedBuffers
// under MemoryCategory::kOther on `tracker`, exactly: one tile x tile score tile, a tile's running
// max and running sum, and a tile x head_size output accumulator (flash_forward_scratch_bytes).
// For each (b, h) and query tile, walk the key tiles up to the diagonal: scores q·k/sqrt(D)
// (keys j <= i only), a new running max, rescale the sum and accumulator by exp(old - new), add
// exp(s - max) and exp(s - max)·v. At the end out = acc / sum and lse = max + log(sum).
// Graded by tests/09_memory_accounting/flash_attention_test.cc:
//   bazel test --config=exercises //tests/09_memory_accounting:flash_attention_test
#include "chapters/09_memory_accounting/flash_attention.h"

#include "common/check.h"

namespace book::mem {

template <typename T>
void flash_attention_forward(const T* qkv, const FlashShape& shape, T* out, T* lse,
                             MemoryTracker* tracker) {
  (void)qkv, (void)shape, (void)out, (void)lse, (void)tracker;
  // clang-format off
  BOOK_NOT_IMPLEMENTED("mem.flash_attention_forward", "exercises/09_memory_accounting/flash_attention.cc",
                       "chapters/09_memory_accounting/README.md, section Attention without the T × T matrix");
  // clang-format on
}

template void flash_attention_forward<float>(const float*, const FlashShape&, float*, float*,
                                             MemoryTracker*);
template void flash_attention_forward<double>(const double*, const FlashShape&, double*, double*,
                                              MemoryTracker*);

}  // namespace book::mem
