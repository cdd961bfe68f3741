// The argument checks of speculative.h, shared by the reference bodies and the stubs, and the
// scaffolding sampler the rules use.
#include <cmath>

#include "chapters/13_disaggregation_speculation/speculative.h"
#include "common/check.h"

namespace book::spec {

void check_gamma(int gamma, int context) {
  BOOK_CHECK(gamma >= 1,
             "speculative decoding: gamma (draft tokens per step) must be >= 1, got " << gamma);
  BOOK_CHECK(gamma <= context - 1, "speculative decoding: gamma = "
                                       << gamma << " needs " << gamma + 1
                                       << " positions in one verification pass, but the "
                                          "model's context is "
                                       << context << " (use gamma <= " << context - 1 << ")");
}

void check_same_vocabulary(int target_vocab, int draft_vocab) {
  BOOK_CHECK(target_vocab == draft_vocab, "speculative decoding: the draft's vocabulary has "
                                              << draft_vocab << " tokens but the target's has "
                                              << target_vocab
                                              << ": the draft must share the target's tokenizer");
}

void check_distribution(std::span<const double> p, const char* name, double tolerance) {
  BOOK_CHECK(!p.empty(), name << " is empty: a distribution needs at least one entry");
  double sum = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    BOOK_CHECK(std::isfinite(p[i]) && p[i] >= 0,
               name << "[" << i << "] = " << p[i] << " is not a probability (finite and >= 0)");
    sum += p[i];
  }
  BOOK_CHECK(std::abs(sum - 1.0) <= tolerance,
             name << " sums to " << sum << ", not 1 (tolerance " << tolerance << ")");
}

int sample_index(std::span<const double> p, double uniform) {
  check_distribution(p, "sample_index: p");
  BOOK_CHECK(uniform >= 0 && uniform < 1,
             "sample_index: uniform must be in [0, 1), got " << uniform);
  double cumulative = 0;
  int last_positive = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (p[i] <= 0) continue;
    last_positive = static_cast<int>(i);
    cumulative += p[i];
    if (uniform < cumulative) return static_cast<int>(i);
  }
  return last_positive;  // the sum fell short of uniform by rounding
}

}  // namespace book::spec
