// Reference body of exercise mem.zero_model_states (chapters/09_memory_accounting/model_states.h).
#include "chapters/09_memory_accounting/model_states.h"

#include <algorithm>

#include "chapters/09_memory_accounting/dp_states.h"
#include "common/check.h"

namespace book::mem {

//! [rank_parameters]
std::int64_t rank_parameters(const ModelShape& shape, const Parallelism& par) {
  const ParameterBreakdown p = parameters_of(shape);
  BOOK_CHECK(par.tp >= 1 && shape.n_head % par.tp == 0, "--tp " << par.tp << " does not divide the "
                                                                << shape.n_head << " heads of "
                                                                << shape.name);
  BOOK_CHECK(
      par.pp >= 1 && shape.n_layer % par.pp == 0,
      "--pp " << par.pp << " does not divide the " << shape.n_layer << " layers of " << shape.name);
  const auto split = [&](std::int64_t n) { return (n + par.tp - 1) / par.tp; };
  const std::int64_t layers = shape.n_layer / par.pp;
  const std::int64_t blocks = layers * (split(p.layer_matrices) + p.layer_norms);
  // One stage holds the embedding and the head, or the first and last stages hold one each.
  const std::int64_t ends =
      par.pp == 1 ? split(p.embedding + p.head) : std::max(split(p.embedding), split(p.head));
  return blocks + ends;
}
//! [rank_parameters]

//! [zero_model_states]
zero::ModelStateBytes zero_model_states(const ModelShape& shape, const Parallelism& par,
                                        DType precision) {
  const std::int64_t psi = rank_parameters(shape, par);
  return dp_model_states(static_cast<std::uint64_t>(psi), par.dp, par.stage, precision);
}
//! [zero_model_states]

}  // namespace book::mem
