/// @file
/// The distributed sampler: which samples each rank reads. Every global batch is dealt out among
/// the ranks so that, over an epoch, each sample is read by exactly one rank exactly once, and all
/// ranks agree on the order without talking (they share the seed).
///
/// The rule, PyTorch's DistributedSampler made exact for batches: the epoch's order is a
/// permutation of the dataset (epoch_order); global batch b is its elements [b·G, b·G + G); rank r
/// reads the contiguous shard r of that batch, cut as chapter 3 cuts every buffer
/// (coll::shard_of: the first count % N shards one sample longer). The uneven tail: the epoch's
/// last batch holds D mod G samples when G does not divide D, and is cut the same way, so ranks
/// then differ by at most one sample and a rank may get none; nothing is dropped and nothing is
/// read twice (PyTorch instead pads by repeating samples, or drops the tail with drop_last).
#pragma once

#include <cstdint>
#include <vector>

namespace book::ddp {

/// What a distributed sampler deals out.
struct SamplerOptions {
  std::int64_t dataset_size = 1;  ///< samples in the dataset, D ≥ 1
  int global_batch = 1;           ///< samples per global batch, all ranks together, G ≥ 1
  int world_size = 1;             ///< ranks sharing each global batch, 1 ≤ N ≤ G
  bool shuffle = true;            ///< a new order every epoch; false: 0, 1, …, D−1 every epoch
  std::uint64_t seed = 0;         ///< the shuffle's seed, the same on every rank
};

/// Throws book::Error naming the first field out of range and what to do.
void validate(const SamplerOptions& options);

/// Global batches in one epoch: ⌈D / G⌉ (the last is short when G does not divide D).
std::int64_t batches_per_epoch(const SamplerOptions& options);

/// The epoch's order of the samples: with shuffle, a permutation of 0 … D−1 drawn by
/// Fisher–Yates from book::Rng seeded with (seed, epoch), identical on every rank and machine;
/// without, the identity. Requires valid options and epoch ≥ 0.
std::vector<std::int64_t> epoch_order(const SamplerOptions& options, std::int64_t epoch);

/// Exercise ddp.distributed_sampler: the indices of the samples rank `rank` reads for global
/// batch `batch` of epoch `epoch`, in the epoch's order: shard `rank` (coll::shard_of) of
/// epoch_order(options, epoch)[batch·G, min(batch·G + G, D)). The arguments are valid (the
/// DistributedSampler below checks them): 0 ≤ batch < batches_per_epoch, 0 ≤ rank < N.
/// \exercise{ddp.distributed_sampler}
std::vector<std::int64_t> rank_batch(const SamplerOptions& options, std::int64_t epoch,
                                     std::int64_t batch, int rank);

/// One rank's end of the sampler: checks its arguments, then asks rank_batch.
class DistributedSampler {
 public:
  /// Rank `rank`'s sampler. Throws book::Error for invalid options or a rank outside [0, N).
  DistributedSampler(const SamplerOptions& options, int rank);
  /// The samples this rank reads for global batch `batch` of epoch `epoch`. Throws book::Error
  /// for a negative epoch or a batch outside [0, batches_per_epoch()).
  std::vector<std::int64_t> indices(std::int64_t epoch, std::int64_t batch) const;
  /// ⌈D / G⌉.
  std::int64_t batches_per_epoch() const { return batches_; }
  const SamplerOptions& options() const { return options_; }  ///< What it deals out.
  int rank() const { return rank_; }                          ///< Whose sampler it is.

 private:
  SamplerOptions options_;
  int rank_;
  std::int64_t batches_;
};

}  // namespace book::ddp
