// Reference body of serve.sample_top_p.
#include "chapters/11_continuous_batching/sampling.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "common/check.h"

namespace book::serve {

//! [sample_top_p]
int sample_top_p(std::span<const float> logits, const SamplingParams& params, double uniform) {
  BOOK_CHECK(!logits.empty(), "sample_top_p: no logits");
  check_sampling(params);
  BOOK_CHECK(uniform >= 0 && uniform < 1,
             "sample_top_p: uniform must be in [0, 1), got " << uniform);
  const int n = static_cast<int>(logits.size());
  if (params.temperature == 0)
    return static_cast<int>(std::max_element(logits.begin(), logits.end()) - logits.begin());
  // Softmax in double, shifted by the largest logit so exp never overflows.
  const double top = *std::max_element(logits.begin(), logits.end());
  std::vector<double> p(n);
  for (int i = 0; i < n; ++i) p[i] = std::exp((logits[i] - top) / params.temperature);
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return p[a] > p[b]; });
  int keep = params.top_k > 0 ? std::min(params.top_k, n) : n;
  double total = 0;
  for (int i = 0; i < keep; ++i) total += p[order[i]];
  double mass = 0;  // the nucleus: the shortest prefix reaching top_p of the kept mass
  for (int i = 0; i < keep; ++i) {
    mass += p[order[i]];
    if (mass >= params.top_p * total) {
      keep = i + 1;
      break;
    }
  }
  double cumulative = 0;
  for (int i = 0; i < keep; ++i) {
    cumulative += p[order[i]] / mass;
    if (uniform < cumulative) return order[i];
  }
  return order[keep - 1];  // rounding left the sum a hair under 1
}
//! [sample_top_p]

}  // namespace book::serve
