// Exercise mem.zero_model_states — write rank_parameters and zero_model_states (declared in
// chapters/09_memory_accounting/model_states.h): rank_parameters takes parameters_of(shape),
// refuses a --tp that does not divide the heads or a --pp that does not divide the layers, and
// adds n_layer/pp blocks (matrices split over tp, rounded up; norms whole) to the embedding and
// head (split over tp: both when pp = 1, the larger otherwise). zero_model_states shards that
// Ψ_rank over the data-parallel group with dp_model_states (chapter 6's formula).
// Graded by tests/09_memory_accounting/model_states_test.cc:
//   bazel test --config=exercises //tests/09_memory_accounting:model_states_test
#include "chapters/09_memory_accounting/model_states.h"

#include "common/check.h"

namespace book::mem {

std::int64_t rank_parameters(const ModelShape& shape, const Parallelism& par) {
  (void)shape, (void)par;
  BOOK_NOT_IMPLEMENTED("mem.zero_model_states", "exercises/09_memory_accounting/model_states.cc",
                       "chapters/09_memory_accounting/README.md, section Model states per rank");
}

zero::ModelStateBytes zero_model_states(const ModelShape& shape, const Parallelism& par,
                                        DType precision) {
  (void)shape, (void)par, (void)precision;
  BOOK_NOT_IMPLEMENTED("mem.zero_model_states", "exercises/09_memory_accounting/model_states.cc",
                       "chapters/09_memory_accounting/README.md, section Model states per rank");
}

}  // namespace book::mem
