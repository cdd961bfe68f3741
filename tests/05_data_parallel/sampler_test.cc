// Graded: ddp.distributed_sampler. Over an epoch every sample is read by exactly one rank exactly
// once, for N = 1..8 and dataset sizes the batch does not divide; ranks agree on the order
// without talking; the tail is spread, not dropped or padded.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "chapters/05_data_parallel/sampler.h"
#include "common/testing/exercise.h"

namespace book::ddp {
namespace {

std::string label(const SamplerOptions& o) {
  return "D=" + std::to_string(o.dataset_size) + " G=" + std::to_string(o.global_batch) +
         " N=" + std::to_string(o.world_size) + (o.shuffle ? " shuffled" : " in order");
}

EXERCISE_TEST("ddp.distributed_sampler", DistributedSampler, EverySampleOnceAnEpochOnOneRank) {
  for (int n = 1; n <= 8; ++n) {
    for (std::int64_t d : {1, 7, 64, 97, 1000, 1037}) {
      for (int g : {n, 2 * n + 1, 64}) {
        if (g < n || d < 1) continue;
        for (bool shuffle : {true, false}) {
          const SamplerOptions o{d, g, n, shuffle, 11};
          std::vector<DistributedSampler> ranks;
          for (int r = 0; r < n; ++r) ranks.emplace_back(o, r);
          for (std::int64_t epoch : {0, 1}) {
            const auto order = epoch_order(o, epoch);
            std::vector<int> seen(static_cast<std::size_t>(d), 0);
            for (std::int64_t b = 0; b < ranks[0].batches_per_epoch(); ++b) {
              std::vector<std::int64_t> batch;  // the ranks' shards, concatenated in rank order
              std::size_t smallest = SIZE_MAX, largest = 0;
              for (int r = 0; r < n; ++r) {
                const auto mine = ranks[r].indices(epoch, b);
                smallest = std::min(smallest, mine.size());
                largest = std::max(largest, mine.size());
                batch.insert(batch.end(), mine.begin(), mine.end());
                for (std::int64_t i : mine) {
                  ASSERT_TRUE(i >= 0 && i < d) << label(o) << ": index " << i;
                  ++seen[static_cast<std::size_t>(i)];
                }
              }
              ASSERT_LE(largest - smallest, 1u)
                  << label(o) << " batch " << b << ": shards differ by more than one sample";
              // Concatenated in rank order, the shards are the epoch's order, batch by batch.
              const auto first = order.begin() + b * g;
              const auto last = first + static_cast<std::int64_t>(batch.size());
              ASSERT_TRUE(std::equal(first, last, batch.begin()))
                  << label(o) << " epoch " << epoch << " batch " << b
                  << ": the shards must be consecutive pieces of epoch_order, in rank order";
              const std::int64_t expected =
                  std::min<std::int64_t>(g, d - b * static_cast<std::int64_t>(g));
              ASSERT_EQ(static_cast<std::int64_t>(batch.size()), expected)
                  << label(o) << " batch " << b;
            }
            for (std::int64_t i = 0; i < d; ++i)
              ASSERT_EQ(seen[static_cast<std::size_t>(i)], 1)
                  << label(o) << " epoch " << epoch << ": sample " << i << " was read "
                  << seen[static_cast<std::size_t>(i)] << " times (expected once)";
          }
        }
      }
    }
  }
}

EXERCISE_TEST("ddp.distributed_sampler", DistributedSampler, TheTailIsSpreadNotDroppedOrPadded) {
  // 10 samples, batches of 4, 3 ranks: batches of 4, 4, then a tail of 2 for 3 ranks.
  const SamplerOptions o{10, 4, 3, false, 0};
  std::vector<std::vector<std::int64_t>> tail;
  for (int r = 0; r < 3; ++r) tail.push_back(DistributedSampler(o, r).indices(0, 2));
  EXPECT_EQ(tail[0], (std::vector<std::int64_t>{8}));
  EXPECT_EQ(tail[1], (std::vector<std::int64_t>{9}));
  EXPECT_TRUE(tail[2].empty()) << "rank 2 gets nothing in the tail: nothing is repeated for it";
  EXPECT_EQ(DistributedSampler(o, 0).indices(0, 0), (std::vector<std::int64_t>{0, 1}));
  EXPECT_EQ(DistributedSampler(o, 2).indices(0, 1), (std::vector<std::int64_t>{7}));
}

EXERCISE_TEST("ddp.distributed_sampler", DistributedSampler, ShufflesPerEpochTheSameOnEveryRank) {
  const SamplerOptions o{1000, 40, 4, true, 5};
  const DistributedSampler rank1(o, 1);
  const auto e0 = rank1.indices(0, 3), e1 = rank1.indices(1, 3);
  EXPECT_NE(e0, e1) << "a new epoch must bring a new order";
  EXPECT_EQ(e0, DistributedSampler(o, 1).indices(0, 3)) << "the same call, the same answer";
  SamplerOptions other_seed = o;
  other_seed.seed = 6;
  EXPECT_NE(e0, DistributedSampler(other_seed, 1).indices(0, 3)) << "another seed, another order";
  const auto order = epoch_order(o, 0);
  EXPECT_EQ(e0, std::vector<std::int64_t>(order.begin() + 130, order.begin() + 140))
      << "rank 1 of 4 reads elements [130, 140) of the order in batch 3 (3*40 + 10)";
}

}  // namespace
}  // namespace book::ddp
