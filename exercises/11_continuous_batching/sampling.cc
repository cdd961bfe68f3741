// Exercise serve.sample_top_p: write sample_top_p of chapters/11_continuous_batching/sampling.h.
//
// Check: logits not empty, check_sampling(params), 0 <= uniform < 1 (book::Error otherwise).
// Temperature 0: return the index of the largest logit (first on ties). Else compute
// p_i = exp((logit_i - max) / temperature) in double, sort the indices by p descending (stable:
// lower index first on ties), keep the first top_k (if > 0), then the shortest prefix whose sum
// reaches top_p times the kept total; walk that prefix accumulating p / (prefix sum) and return
// the first index whose cumulative value exceeds uniform (the last one if rounding leaves none).
// Test: bazel test --config=exercises //tests/11_continuous_batching:sampling_test
#include "chapters/11_continuous_batching/sampling.h"

#include "common/check.h"

namespace book::serve {

int sample_top_p(std::span<const float> logits, const SamplingParams& params, double uniform) {
  (void)logits, (void)params, (void)uniform;
  BOOK_NOT_IMPLEMENTED("serve.sample_top_p", "exercises/11_continuous_batching/sampling.cc",
                       "chapters/11_continuous_batching/README.md, section Sampling");
}

}  // namespace book::serve
