// Test helpers for chapter 7: the tiny model shape, seeded random inputs, a tolerance check that
// prints the first mismatches, and the comparison of each rank's shard of the gradients with the
// one-device model's, placed back into the whole layout.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "chapters/04_training_baseline/data.h"
#include "chapters/04_training_baseline/parameter_copy.h"
#include "chapters/04_training_baseline/parameters.h"
#include "chapters/07_tensor_parallel/tensor_parallel_group.h"
#include "common/rng.h"

namespace book::tp::testing {

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// 3 layers, 4 heads of 3 (C = 12), vocabulary 12, context 5: 1, 2 and 4 tensor-parallel ranks
/// divide the heads and the vocabulary; 3 layers make 2 or 3 pipeline stages.
inline train::Config tiny_config() {
  train::Config c;
  c.vocab_size = 12;
  c.context = 5;
  c.n_layer = 3;
  c.n_head = 4;
  c.d_model = 12;
  return c;
}

/// `batch` sequences of `seq_len` random tokens; every fourth target is -1 (ignored). The default
/// 2 × 4 = 8 tokens split evenly over 1, 2 and 4 ranks (sequence parallelism needs that).
inline train::Batch tiny_batch(std::uint64_t seed, int batch = 2, int seq_len = 4) {
  train::Batch b;
  b.batch = batch;
  b.seq_len = seq_len;
  Rng rng(seed);
  for (int i = 0; i < batch * seq_len; ++i) {
    b.tokens.push_back(static_cast<int>(rng.uniform_int(0, 11)));
    b.targets.push_back(i % 4 == 0 ? -1 : static_cast<int>(rng.uniform_int(0, 11)));
  }
  return b;
}

/// `n` values uniform in [lo, hi) (never zeros, never a constant).
inline std::vector<double> random_vector(std::size_t n, std::uint64_t seed, double lo = -1.0,
                                         double hi = 1.0) {
  Rng rng(seed);
  std::vector<double> v(n);
  for (auto& x : v) x = rng.uniform(lo, hi);
  return v;
}

/// Uniform(-0.5, 0.5) parameters of the whole model, gains around 1 (larger than GPT-2's
/// initialisation, so every path carries signal).
inline std::vector<double> random_parameters(const train::ParameterLayout& whole,
                                             std::uint64_t seed) {
  std::vector<double> p = random_vector(whole.total(), seed, -0.5, 0.5);
  for (const auto& slot : whole.slots())
    if (slot.name.find("gain") != std::string::npos)
      for (std::size_t i = 0; i < slot.size(); ++i) p[slot.offset + i] += 1.0;
  return p;
}

/// Expects |actual − expected| <= tol · max(1, |expected|) everywhere (NaN fails); reports the
/// first mismatches with their index, the expected and the actual value.
inline void expect_close(const std::string& what, const std::vector<double>& expected,
                         const std::vector<double>& actual, double tol) {
  ASSERT_EQ(expected.size(), actual.size()) << what;
  int reported = 0;
  for (std::size_t i = 0; i < expected.size() && reported < 5; ++i) {
    const double bound = tol * std::max(1.0, std::fabs(expected[i]));
    if (!(std::fabs(actual[i] - expected[i]) <= bound)) {
      ADD_FAILURE() << what << "[" << i << "]: expected " << expected[i] << ", got " << actual[i]
                    << " (tolerance " << bound << ")";
      ++reported;
    }
  }
}

/// Places each rank's gradients (in its layout) back into the whole model's layout and compares
/// them with `want` (relative tolerance `tol`); every element must be held by at least one rank.
inline void expect_rank_gradients(const train::ParameterLayout& whole,
                                  const std::vector<double>& want,
                                  const std::vector<train::ParameterLayout>& layouts,
                                  const std::vector<std::vector<double>>& grads, double tol) {
  std::vector<bool> covered(whole.total(), false);
  for (std::size_t r = 0; r < layouts.size(); ++r) {
    std::vector<double> placed(whole.total(), kNaN);
    train::copy_to_whole<double>(layouts[r], grads[r], whole, placed);
    for (const auto& slot : whole.slots())
      for (std::size_t i = slot.offset; i < slot.offset + slot.size(); ++i) {
        if (std::isnan(placed[i])) continue;  // another rank's shard
        covered[i] = true;
        ASSERT_NEAR(placed[i], want[i], tol * std::max(1.0, std::fabs(want[i])))
            << "rank " << r << " of " << layouts.size() << ": gradient of " << slot.name << "["
            << i - slot.offset << "]";
      }
  }
  for (const auto& slot : whole.slots())
    for (std::size_t i = slot.offset; i < slot.offset + slot.size(); ++i)
      ASSERT_TRUE(covered[i]) << slot.name << "[" << i - slot.offset << "] is held by no rank";
}

/// Expects every field of `actual` to equal `expected`'s; `what` names the part of the run.
inline void expect_counts(const CollectiveCounts& expected, const CollectiveCounts& actual,
                          const std::string& what) {
  EXPECT_EQ(actual.all_reduces, expected.all_reduces) << what << ": all-reduces";
  EXPECT_EQ(actual.all_reduce_elements, expected.all_reduce_elements)
      << what << ": all-reduced elements";
  EXPECT_EQ(actual.reduce_scatters, expected.reduce_scatters) << what << ": reduce-scatters";
  EXPECT_EQ(actual.reduce_scatter_elements, expected.reduce_scatter_elements)
      << what << ": reduce-scattered elements";
  EXPECT_EQ(actual.all_gathers, expected.all_gathers) << what << ": all-gathers";
  EXPECT_EQ(actual.all_gather_elements, expected.all_gather_elements)
      << what << ": all-gathered elements";
}

}  // namespace book::tp::testing
