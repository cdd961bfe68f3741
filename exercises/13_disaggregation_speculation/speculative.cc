// Exercises spec.verify_greedy, spec.rejection_sample and spec.expected_tokens: write them from
// chapters/13_disaggregation_speculation/speculative.h.
//
// verify_greedy: check the arguments; walk i = 0, 1, ...: stop at the first draft[i] that is not
// the argmax of row i; return {i, argmax of row i}.
// rejection_sample: check_distribution(p), check_distribution(q), then the rest of the checks;
// keep x if u_accept < min(1, p[x] / q[x]); else sample_index(max(0, p - q) normalised,
// u_residual). expected_tokens: 1 + alpha + ... + alpha^gamma; gamma + 1 when alpha = 1. Test:
// bazel test --config=exercises //tests/13_disaggregation_speculation/...
#include "chapters/13_disaggregation_speculation/speculative.h"

#include "common/check.h"

namespace book::spec {

GreedyVerdict verify_greedy(std::span<const int> draft, std::span<const float> target_logits,
                            int vocab) {
  (void)draft, (void)target_logits, (void)vocab;
  BOOK_NOT_IMPLEMENTED("spec.verify_greedy",
                       "exercises/13_disaggregation_speculation/speculative.cc",
                       "chapters/13_disaggregation_speculation/README.md, section The greedy rule");
}

SampleVerdict rejection_sample(std::span<const double> p, std::span<const double> q,
                               int draft_token, double u_accept, double u_residual) {
  (void)p, (void)q, (void)draft_token, (void)u_accept, (void)u_residual;
  BOOK_NOT_IMPLEMENTED(
      "spec.rejection_sample", "exercises/13_disaggregation_speculation/speculative.cc",
      "chapters/13_disaggregation_speculation/README.md, section The sampling rule");
}

double expected_tokens(double alpha, int gamma) {
  (void)alpha, (void)gamma;
  BOOK_NOT_IMPLEMENTED(
      "spec.expected_tokens", "exercises/13_disaggregation_speculation/speculative.cc",
      "chapters/13_disaggregation_speculation/README.md, section How many tokens a pass makes");
}

}  // namespace book::spec
