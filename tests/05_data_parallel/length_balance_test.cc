// Scaffolding: balanced partitions of a batch of unequal samples. LeetCode 410 by binary search
// against brute force; every sample on exactly one rank; length-aware splits lower max/mean.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <numeric>
#include <vector>

#include "chapters/05_data_parallel/length_balance.h"
#include "common/rng.h"

namespace book::ddp {
namespace {

// Every way to cut `costs` into `ranks` contiguous runs (some may be empty): the best largest sum.
std::int64_t brute_force(const std::vector<std::int64_t>& costs, std::size_t from, int ranks) {
  if (ranks == 1)
    return std::accumulate(costs.begin() + static_cast<std::ptrdiff_t>(from), costs.end(),
                           std::int64_t{0});
  std::int64_t best = std::numeric_limits<std::int64_t>::max(), run = 0;
  for (std::size_t end = from; end <= costs.size(); ++end) {
    if (end > from) run += costs[end - 1];
    best = std::min(best, std::max(run, brute_force(costs, end, ranks - 1)));
  }
  return best;
}

void expect_each_sample_once(const Assignment& a, std::size_t samples, const char* what) {
  std::vector<int> seen(samples, 0);
  for (const auto& rank : a)
    for (std::size_t i : rank) ++seen.at(i);
  for (std::size_t i = 0; i < samples; ++i) ASSERT_EQ(seen[i], 1) << what << ": sample " << i;
}

TEST(LengthBalance, SplitArrayLargestSumMatchesBruteForce) {
  Rng rng(410);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<std::int64_t> costs(static_cast<std::size_t>(rng.uniform_int(1, 9)));
    for (auto& c : costs) c = rng.uniform_int(0, 50);
    const int ranks = static_cast<int>(rng.uniform_int(1, 4));
    const std::int64_t best = brute_force(costs, 0, ranks);
    ASSERT_EQ(smallest_largest_sum(costs, ranks), best) << "trial " << trial;
    const Assignment a = split_by_cost(costs, ranks);
    expect_each_sample_once(a, costs.size(), "split_by_cost");
    const auto loads = rank_loads(costs, a);
    ASSERT_EQ(*std::max_element(loads.begin(), loads.end()), best) << "trial " << trial;
    std::size_t next = 0;  // contiguous, in order
    for (const auto& rank : a)
      for (std::size_t i : rank) ASSERT_EQ(i, next++);
    if (costs.size() >= static_cast<std::size_t>(ranks)) {
      for (const auto& rank : a) ASSERT_FALSE(rank.empty()) << "every rank gets a sample";
    }
  }
}

TEST(LengthBalance, LengthAwareSplitsLowerMaxOverMean) {
  const std::vector<std::int64_t> lengths = mixed_lengths(256, 0.1, 7);
  for (std::int64_t l : lengths) ASSERT_TRUE((l >= 64 && l <= 512) || (l >= 2048 && l <= 8192));
  const int ranks = 8;
  auto ratio = [&](const Assignment& a) {
    const auto loads = rank_loads(lengths, a);
    const std::vector<double> d(loads.begin(), loads.end());
    return max_over_mean(d);
  };
  const Assignment by_count = split_by_count(lengths.size(), ranks);
  const Assignment by_cost = split_by_cost(lengths, ranks);
  const Assignment lpt = longest_first(lengths, ranks);
  for (const auto* a : {&by_count, &by_cost, &lpt})
    expect_each_sample_once(*a, lengths.size(), "split");
  for (const auto& rank : by_count) EXPECT_EQ(rank.size(), 32u) << "by count: 256 / 8 each";
  EXPECT_GT(ratio(by_count), ratio(by_cost));
  EXPECT_GE(ratio(by_cost), ratio(lpt) - 1e-12) << "dropping contiguity can only help";
  EXPECT_LT(ratio(lpt), 1.05) << "256 samples on 8 ranks balance within 5% by LPT";
}

}  // namespace
}  // namespace book::ddp
