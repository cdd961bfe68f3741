/// @file
/// Uneven work: a global batch of samples of very different lengths (a few hundred text tokens
/// next to thousands of video tokens) dealt out by *count* gives one rank far more tokens than
/// another, and a synchronous step waits for the slowest: step time = max over ranks, while the
/// work done is the mean. max/mean is the price of imbalance.
///
/// Length-aware batching deals by *cost* instead. Keeping each rank's samples contiguous (as the
/// distributed sampler does), the best cut is LeetCode 410, "Split Array Largest Sum" (chapter 12,
/// dp.410, solves it by dynamic programming): here by binary search on the answer, O(n log Σ).
/// Dropping contiguity, the classic greedy "longest first to the least-loaded rank" (Graham's LPT
/// rule, within 4/3 of the best) usually balances even better.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace book::ddp {

/// Which samples each rank gets: assignment[r] lists sample indices.
using Assignment = std::vector<std::vector<std::size_t>>;

/// By count: rank r gets the contiguous shard r of the samples (coll::shard_of), whatever their
/// length: what the distributed sampler does.
Assignment split_by_count(std::size_t samples, int ranks);

/// By cost, contiguous: cuts `costs` (in order) into `ranks` contiguous runs whose largest sum is
/// the smallest possible (LeetCode 410), every rank getting at least one sample when there are
/// enough. Throws book::Error for ranks < 1 or a negative cost.
Assignment split_by_cost(std::span<const std::int64_t> costs, int ranks);

/// The smallest possible largest sum of `ranks` contiguous runs of `costs` (the 410 answer).
std::int64_t smallest_largest_sum(std::span<const std::int64_t> costs, int ranks);

/// By cost, any order: samples from the most to the least costly, each to the rank with the least
/// cost so far (ties: the lower rank).
Assignment longest_first(std::span<const std::int64_t> costs, int ranks);

/// Each rank's total cost under `assignment`.
std::vector<std::int64_t> rank_loads(std::span<const std::int64_t> costs,
                                     const Assignment& assignment);

/// max / mean of `loads` (1 = perfectly balanced). Throws book::Error if empty or all zero.
double max_over_mean(std::span<const double> loads);

/// A mixed batch: `samples` lengths in tokens, most text (64–512 tokens), a `long_share` of them
/// long (2048–8192, think video frames as tokens), drawn with book::Rng from `seed`.
std::vector<std::int64_t> mixed_lengths(std::size_t samples, double long_share, std::uint64_t seed);

}  // namespace book::ddp
