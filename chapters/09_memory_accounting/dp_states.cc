// One data-parallel rank's model state, by chapter 6's formula.
#include "chapters/09_memory_accounting/dp_states.h"

#include "common/check.h"

namespace book::mem {

zero::ModelStateBytes dp_model_states(std::uint64_t psi, int dp, zero::Stage stage,
                                      DType precision) {
  BOOK_CHECK(dp >= 1, "--dp must be >= 1, got " << dp);
  BOOK_CHECK(psi >= static_cast<std::uint64_t>(dp),
             "--dp " << dp << " exceeds the " << psi
                     << " parameters of a rank: a rank would own nothing; use fewer ranks");
  const std::uint64_t owned = (psi + dp - 1) / dp;
  return zero::model_state_bytes(stage, precision, psi, owned);
}

}  // namespace book::mem
