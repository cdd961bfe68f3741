// Reference for ddp.distributed_sampler: slice the epoch's order to the global batch, then cut
// the batch into one contiguous shard per rank the way chapter 3 cuts every buffer.
#include "chapters/05_data_parallel/sampler.h"

#include <algorithm>

#include "chapters/03_collectives/types.h"

namespace book::ddp {

//! [rank_batch]
std::vector<std::int64_t> rank_batch(const SamplerOptions& options, std::int64_t epoch,
                                     std::int64_t batch, int rank) {
  const std::vector<std::int64_t> order = epoch_order(options, epoch);
  const std::int64_t first = batch * options.global_batch;
  const std::int64_t count =
      std::min<std::int64_t>(options.global_batch, options.dataset_size - first);
  const coll::Shard mine =
      coll::shard_of(static_cast<std::size_t>(count), options.world_size, rank);
  const auto begin = order.begin() + first + static_cast<std::int64_t>(mine.offset);
  return {begin, begin + static_cast<std::int64_t>(mine.count)};
}
//! [rank_batch]

}  // namespace book::ddp
