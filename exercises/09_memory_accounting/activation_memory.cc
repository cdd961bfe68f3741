// Exercise mem.activation_bytes — write activation_bytes_per_layer (declared in
// chapters/09_memory_accounting/activation_memory.h): check that s, b, h, a and t are positive
// and that t divides a (a book::Error naming the values otherwise), then return the bytes of
// Korthikanti et al.'s table for the recomputation policy and sequence parallelism, summing
// each row's terms before the one division by t.
// Graded by tests/09_memory_accounting/activation_memory_test.cc:
//   bazel test --config=exercises //tests/09_memory_accounting:activation_memory_test
#include "chapters/09_memory_accounting/activation_memory.h"

#include "common/check.h"

namespace book::mem {

std::uint64_t activation_bytes_per_layer(const LayerActivationInputs& in) {
  check_activation_size(in);  // given: refuses sizes whose bytes overflow
  (void)in;
  BOOK_NOT_IMPLEMENTED("mem.activation_bytes",
                       "exercises/09_memory_accounting/activation_memory.cc",
                       "chapters/09_memory_accounting/README.md, section Activations");
}

}  // namespace book::mem
