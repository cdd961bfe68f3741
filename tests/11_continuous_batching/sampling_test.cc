// Graded tests of serve.sample_top_p: greedy, top-k, top-p against a reference distribution
// computed here in long double, the per-request seed, and the argument checks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

#include "chapters/11_continuous_batching/sampling.h"
#include "common/rng.h"
#include "common/testing/exercise.h"
#include "common/testing/expect_error.h"

namespace book::serve {
namespace {

using book::testing::expect_error;

std::vector<float> random_logits(Rng& rng, int n) {
  std::vector<float> logits(n);
  for (float& x : logits) x = static_cast<float>(3 * rng.normal());
  return logits;
}

// The kept tokens and their probabilities, written independently of the reference body:
// a full sort by (probability desc, index asc), then the cuts.
std::map<int, long double> expected(const std::vector<float>& logits, const SamplingParams& p) {
  const int n = static_cast<int>(logits.size());
  std::vector<long double> prob(n);
  long double sum = 0;
  const float top = *std::max_element(logits.begin(), logits.end());
  for (int i = 0; i < n; ++i) sum += prob[i] = std::exp((logits[i] - top) / p.temperature);
  std::vector<int> order(n);
  for (int i = 0; i < n; ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](int a, int b) { return prob[a] != prob[b] ? prob[a] > prob[b] : a < b; });
  const int k = p.top_k > 0 ? std::min(p.top_k, n) : n;
  long double kept_total = 0;
  for (int i = 0; i < k; ++i) kept_total += prob[order[i]];
  std::map<int, long double> out;
  long double mass = 0;
  for (int i = 0; i < k; ++i) {
    out[order[i]] = prob[order[i]];
    mass += prob[order[i]];
    if (mass >= p.top_p * kept_total) break;
  }
  for (auto& [token, q] : out) q /= mass;
  return out;
}

EXERCISE_TEST("serve.sample_top_p", SampleTopP, TemperatureZeroIsArgmaxWhateverTheUniform) {
  Rng rng(1);
  const auto logits = random_logits(rng, 37);
  const int best =
      static_cast<int>(std::max_element(logits.begin(), logits.end()) - logits.begin());
  for (const double u : {0.0, 0.3, 0.999999})
    EXPECT_EQ(sample_top_p(logits, {0, 5, 0.5, 9}, u), best) << "uniform " << u;
  const std::vector<float> tie = {1, 4, 4, 2};
  EXPECT_EQ(sample_top_p(tie, {}, 0.7), 1) << "ties go to the first index";
}

EXERCISE_TEST("serve.sample_top_p", SampleTopP, TopKOneAndTinyTopPAreGreedy) {
  Rng rng(2);
  for (int trial = 0; trial < 20; ++trial) {
    const auto logits = random_logits(rng, 53);
    const int best =
        static_cast<int>(std::max_element(logits.begin(), logits.end()) - logits.begin());
    const double u = rng.uniform();
    EXPECT_EQ(sample_top_p(logits, {1.3, 1, 1.0, 0}, u), best) << "top_k 1, uniform " << u;
    EXPECT_EQ(sample_top_p(logits, {0.7, 0, 1e-9, 0}, u), best) << "top_p 1e-9, uniform " << u;
  }
}

// A grid of uniforms u = (i + 0.5) / N samples each kept token about N·q times (±1 for the
// boundaries); tokens outside the nucleus never.
EXERCISE_TEST("serve.sample_top_p", SampleTopP, FrequenciesOnAUniformGridMatchTheTruncatedSoftmax) {
  Rng rng(3);
  const int grid = 20000;
  for (const SamplingParams params : {SamplingParams{1.0, 0, 1.0, 0},
                                      {0.8, 0, 0.9, 0},
                                      {1.5, 10, 1.0, 0},
                                      {1.2, 20, 0.75, 0},
                                      {0.5, 3, 0.99, 0}}) {
    const auto logits = random_logits(rng, 61);
    const auto want = expected(logits, params);
    std::map<int, int> count;
    for (int i = 0; i < grid; ++i) ++count[sample_top_p(logits, params, (i + 0.5) / grid)];
    for (const auto& [token, n] : count)
      EXPECT_TRUE(want.count(token))
          << "token " << token << " sampled " << n
          << " times but is outside the kept set (temperature " << params.temperature << ", top_k "
          << params.top_k << ", top_p " << params.top_p << ")";
    for (const auto& [token, q] : want)
      EXPECT_NEAR(count[token], static_cast<double>(q * grid), 1.01)
          << "token " << token << " of the kept set, probability " << static_cast<double>(q)
          << " (temperature " << params.temperature << ", top_k " << params.top_k << ", top_p "
          << params.top_p << ")";
  }
}

EXERCISE_TEST("serve.sample_top_p", SampleTopP, TheSeedMakesAStreamOfItsOwn) {
  Rng rng(4);
  const auto logits = random_logits(rng, 40);
  const SamplingParams a{1.0, 0, 1.0, 7}, b{1.0, 0, 1.0, 8};
  std::vector<int> first, again, other;
  for (int k = 0; k < 64; ++k) {
    first.push_back(sample_top_p(logits, a, sampling_uniform(a.seed, k)));
    again.push_back(sample_top_p(logits, a, sampling_uniform(a.seed, k)));
    other.push_back(sample_top_p(logits, b, sampling_uniform(b.seed, k)));
  }
  EXPECT_EQ(first, again) << "the same seed and token index give the same token";
  EXPECT_NE(first, other) << "another seed gives another stream";
}

EXERCISE_TEST("serve.sample_top_p", SampleTopP, BadArgumentsAreErrors) {
  const std::vector<float> logits = {0.5f, 1.5f, -1};
  expect_error([&] { sample_top_p({}, {}, 0.5); }, "no logits");
  expect_error([&] { sample_top_p(logits, {-0.5, 0, 1, 0}, 0.5); }, {"temperature", "-0.5"});
  expect_error([&] { sample_top_p(logits, {1, -2, 1, 0}, 0.5); }, {"top_k", "-2"});
  expect_error([&] { sample_top_p(logits, {1, 0, 0, 0}, 0.5); }, {"top_p", "(0, 1]"});
  expect_error([&] { sample_top_p(logits, {1, 0, 1.5, 0}, 0.5); }, {"top_p", "1.5"});
  expect_error([&] { sample_top_p(logits, {1, 0, 1, 0}, 1.0); }, {"uniform", "[0, 1)"});
  expect_error([&] { sample_top_p(logits, {1, 0, 1, 0}, -0.1); }, {"uniform", "-0.1"});
}

}  // namespace
}  // namespace book::serve
