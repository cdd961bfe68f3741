// Exercise prod.loss_equivalence: write compare_losses from chapters/15_production_training/
// equivalence.h.
//
// Refuse first (book::Error via BOOK_CHECK): curves of different lengths, empty curves, a
// tolerance that is negative or not finite, a from_step outside [1, length]. Then for every step
// from from_step to the end (element step − 1): a non-finite loss on either side diverges (its
// difference counts as +infinity); under bit_exact any difference in the floats' bits diverges
// (std::bit_cast<std::uint32_t>); otherwise |a − b| computed in double above the tolerance does.
// Keep the first divergent step, the largest difference over every compared step and how many
// steps you compared. Test:
// bazel test --config=exercises //tests/15_production_training:equivalence_test
#include "chapters/15_production_training/equivalence.h"

#include "common/check.h"

namespace book::prod {

Equivalence compare_losses(std::span<const float> baseline, std::span<const float> candidate,
                           const EquivalenceRule& rule) {
  (void)baseline, (void)candidate, (void)rule;
  BOOK_NOT_IMPLEMENTED("prod.loss_equivalence", "exercises/15_production_training/equivalence.cc",
                       "chapters/15_production_training/README.md, section The comparison rule");
}

}  // namespace book::prod
