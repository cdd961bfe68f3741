// The reference body of prod.loss_equivalence.
#include "chapters/15_production_training/equivalence.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "common/check.h"

namespace book::prod {

//! [compare_losses]
Equivalence compare_losses(std::span<const float> baseline, std::span<const float> candidate,
                           const EquivalenceRule& rule) {
  const auto n = static_cast<std::int64_t>(baseline.size());
  BOOK_CHECK(baseline.size() == candidate.size(), "compare_losses: the baseline has "
                                                      << baseline.size() << " steps, the candidate "
                                                      << candidate.size()
                                                      << ": run both arms for the same steps");
  BOOK_CHECK(n > 0, "compare_losses: no steps to compare: run both arms for at least one step");
  BOOK_CHECK(std::isfinite(rule.tolerance) && rule.tolerance >= 0,
             "compare_losses: the tolerance must be finite and >= 0, got "
                 << rule.tolerance << " (1e-3 is the usual rule; bit_exact for the same bits)");
  BOOK_CHECK(
      rule.from_step >= 1 && rule.from_step <= n,
      "compare_losses: from_step " << rule.from_step << " is outside the run's steps 1.." << n);
  Equivalence out;
  for (std::int64_t step = rule.from_step; step <= n; ++step) {
    const float a = baseline[step - 1], b = candidate[step - 1];
    const bool finite = std::isfinite(a) && std::isfinite(b);
    const double difference = finite ? std::abs(static_cast<double>(a) - static_cast<double>(b))
                                     : std::numeric_limits<double>::infinity();
    const bool diverged = !finite || (rule.bit_exact ? std::bit_cast<std::uint32_t>(a) !=
                                                           std::bit_cast<std::uint32_t>(b)
                                                     : difference > rule.tolerance);
    if (diverged && out.first_divergent_step < 0) out.first_divergent_step = step;
    out.largest_difference = std::max(out.largest_difference, difference);
    ++out.steps_compared;
  }
  out.equal = out.first_divergent_step < 0;
  return out;
}
//! [compare_losses]

}  // namespace book::prod
