// The sampler's scaffolding: argument checks, the epoch's order, and the checked entry point.
// rank_batch, the exercise, is in solutions/05_data_parallel/sampler.cc.
#include "chapters/05_data_parallel/sampler.h"

#include <numeric>

#include "common/check.h"
#include "common/rng.h"

namespace book::ddp {

void validate(const SamplerOptions& options) {
  BOOK_CHECK(options.dataset_size >= 1,
             "sampler: the dataset must hold at least one sample, got " << options.dataset_size);
  BOOK_CHECK(options.global_batch >= 1,
             "sampler: the global batch must be at least 1 sample, got " << options.global_batch);
  BOOK_CHECK(options.world_size >= 1,
             "sampler: the world size must be at least 1 rank, got " << options.world_size);
  BOOK_CHECK(options.world_size <= options.global_batch,
             "sampler: " << options.world_size << " ranks cannot share a global batch of "
                         << options.global_batch
                         << " samples (some would never get one): use a global batch of at least "
                         << options.world_size);
}

std::int64_t batches_per_epoch(const SamplerOptions& options) {
  validate(options);
  return (options.dataset_size + options.global_batch - 1) / options.global_batch;
}

std::vector<std::int64_t> epoch_order(const SamplerOptions& options, std::int64_t epoch) {
  validate(options);
  BOOK_CHECK(epoch >= 0, "sampler: the epoch must be >= 0, got " << epoch);
  std::vector<std::int64_t> order(static_cast<std::size_t>(options.dataset_size));
  std::iota(order.begin(), order.end(), std::int64_t{0});
  if (!options.shuffle) return order;
  // One stream per (seed, epoch): every rank draws the same permutation without a message.
  Rng rng(options.seed * 0x9e3779b97f4a7c15ULL + static_cast<std::uint64_t>(epoch));
  for (std::size_t i = order.size() - 1; i > 0; --i)  // Fisher–Yates, from the back
    std::swap(order[i],
              order[static_cast<std::size_t>(rng.uniform_int(0, static_cast<std::int64_t>(i)))]);
  return order;
}

DistributedSampler::DistributedSampler(const SamplerOptions& options, int rank)
    : options_(options), rank_(rank), batches_(ddp::batches_per_epoch(options)) {
  BOOK_CHECK(rank >= 0 && rank < options.world_size,
             "sampler: rank " << rank << " is outside the world of " << options.world_size
                              << " ranks (0.." << options.world_size - 1 << ")");
}

std::vector<std::int64_t> DistributedSampler::indices(std::int64_t epoch,
                                                      std::int64_t batch) const {
  BOOK_CHECK(epoch >= 0, "sampler: the epoch must be >= 0, got " << epoch);
  BOOK_CHECK(batch >= 0 && batch < batches_, "sampler: batch "
                                                 << batch << " is outside the epoch's " << batches_
                                                 << " global batches (0.." << batches_ - 1 << ")");
  return rank_batch(options_, epoch, batch, rank_);
}

}  // namespace book::ddp
