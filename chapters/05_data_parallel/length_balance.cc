// Balanced partitions of a batch of samples of unequal lengths.
#include "chapters/05_data_parallel/length_balance.h"

#include <algorithm>
#include <numeric>

#include "chapters/03_collectives/types.h"
#include "common/check.h"
#include "common/rng.h"

namespace book::ddp {
namespace {

void check(std::span<const std::int64_t> costs, int ranks) {
  BOOK_CHECK(ranks >= 1, "balancing: ranks must be >= 1, got " << ranks);
  for (std::size_t i = 0; i < costs.size(); ++i)
    BOOK_CHECK(costs[i] >= 0, "balancing: sample " << i << " has a negative cost " << costs[i]);
}

// Runs of at most `cap` each, greedily from the left: how many are needed.
int runs_needed(std::span<const std::int64_t> costs, std::int64_t cap) {
  int runs = 1;
  std::int64_t sum = 0;
  for (std::int64_t c : costs) {
    if (sum + c > cap) ++runs, sum = 0;
    sum += c;
  }
  return runs;
}

}  // namespace

Assignment split_by_count(std::size_t samples, int ranks) {
  check({}, ranks);
  Assignment out(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) {
    const coll::Shard s = coll::shard_of(samples, ranks, r);
    for (std::size_t i = s.offset; i < s.offset + s.count; ++i) out[r].push_back(i);
  }
  return out;
}

//! [smallest_largest_sum]
std::int64_t smallest_largest_sum(std::span<const std::int64_t> costs, int ranks) {
  check(costs, ranks);
  if (costs.empty()) return 0;
  // The answer lies between the largest sample and the whole batch, and "can `ranks` runs of at
  // most cap hold it?" is monotone in cap: binary search on it.
  std::int64_t lo = *std::max_element(costs.begin(), costs.end());
  std::int64_t hi = std::accumulate(costs.begin(), costs.end(), std::int64_t{0});
  while (lo < hi) {
    const std::int64_t cap = lo + (hi - lo) / 2;
    if (runs_needed(costs, cap) <= ranks)
      hi = cap;
    else
      lo = cap + 1;
  }
  return lo;
}
//! [smallest_largest_sum]

Assignment split_by_cost(std::span<const std::int64_t> costs, int ranks) {
  const std::int64_t cap = smallest_largest_sum(costs, ranks);
  Assignment out(static_cast<std::size_t>(ranks));
  std::size_t rank = 0;
  std::int64_t sum = 0;
  for (std::size_t i = 0; i < costs.size(); ++i) {
    const std::size_t samples_left = costs.size() - i, ranks_left = ranks - rank;
    // Close the run when the next sample would pass the cap, or when every remaining rank needs
    // one of the remaining samples (closing early never raises the largest sum).
    if (!out[rank].empty() && rank + 1 < out.size() &&
        (sum + costs[i] > cap || samples_left < ranks_left))
      ++rank, sum = 0;
    out[rank].push_back(i);
    sum += costs[i];
  }
  return out;
}

Assignment longest_first(std::span<const std::int64_t> costs, int ranks) {
  check(costs, ranks);
  std::vector<std::size_t> order(costs.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return costs[a] > costs[b]; });
  Assignment out(static_cast<std::size_t>(ranks));
  std::vector<std::int64_t> load(static_cast<std::size_t>(ranks), 0);
  for (std::size_t i : order) {
    const auto r =
        static_cast<std::size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    out[r].push_back(i);
    load[r] += costs[i];
  }
  for (auto& samples : out) std::sort(samples.begin(), samples.end());
  return out;
}

std::vector<std::int64_t> rank_loads(std::span<const std::int64_t> costs,
                                     const Assignment& assignment) {
  std::vector<std::int64_t> loads;
  for (const auto& samples : assignment) {
    std::int64_t sum = 0;
    for (std::size_t i : samples) {
      BOOK_CHECK(i < costs.size(),
                 "rank_loads: sample " << i << " is outside the batch of " << costs.size());
      sum += costs[i];
    }
    loads.push_back(sum);
  }
  return loads;
}

double max_over_mean(std::span<const double> loads) {
  BOOK_CHECK(!loads.empty(), "max_over_mean: no loads");
  const double mean = std::accumulate(loads.begin(), loads.end(), 0.0) / loads.size();
  BOOK_CHECK(mean > 0, "max_over_mean: every load is zero");
  return *std::max_element(loads.begin(), loads.end()) / mean;
}

std::vector<std::int64_t> mixed_lengths(std::size_t samples, double long_share,
                                        std::uint64_t seed) {
  BOOK_CHECK(long_share >= 0 && long_share <= 1,
             "mixed_lengths: the long share must be in [0, 1], got " << long_share);
  Rng rng(seed);
  std::vector<std::int64_t> lengths;
  for (std::size_t i = 0; i < samples; ++i)
    lengths.push_back(rng.uniform() < long_share ? rng.uniform_int(2048, 8192)
                                                 : rng.uniform_int(64, 512));
  return lengths;
}

}  // namespace book::ddp
