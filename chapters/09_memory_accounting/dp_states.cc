// One data-parallel rank's model state, by chapter 6's formula.
#include "chapters/09_memory_accounting/dp_states.h"

#include "common/check.h"

namespace book::mem {

zero::ModelStateBytes dp_model_states(std::uint64_t psi, int dp, zero::Stage stage,
                                      DType precision) {
  BOOK_CHECK(dp >= 1, "--dp must be >= 1, got " << dp);
  // Before psi + dp − 1 and 16·psi: above 2^59 they wrap.
  BOOK_CHECK(psi <= (std::uint64_t{1} << 59),
             "dp_model_states: " << psi << " parameters is above 2^59, whose 16 bytes each "
                                 << "overflow 64 bits; price a smaller model");
  BOOK_CHECK(psi >= static_cast<std::uint64_t>(dp),
             "--dp " << dp << " exceeds the " << psi
                     << " parameters of a rank: a rank would own nothing; use fewer ranks");
  const std::uint64_t owned = (psi + dp - 1) / dp;
  return zero::model_state_bytes(stage, precision, psi, owned);
}

}  // namespace book::mem
