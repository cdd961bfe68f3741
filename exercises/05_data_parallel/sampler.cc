// Exercise ddp.distributed_sampler — write rank_batch (declared in
// chapters/05_data_parallel/sampler.h):
//   1. order = epoch_order(options, epoch): the same permutation on every rank;
//   2. the global batch is order[batch·G, min(batch·G + G, D)) (the epoch's last batch may be
//      short: D mod G samples);
//   3. return this rank's contiguous shard of it, coll::shard_of(count, N, rank) from
//      chapters/03_collectives/types.h (the first count % N shards get one sample more).
// Graded by tests/05_data_parallel/sampler_test.cc:
//   bazel test --config=exercises //tests/05_data_parallel:sampler_test
#include "chapters/05_data_parallel/sampler.h"
#include "common/check.h"

namespace book::ddp {

std::vector<std::int64_t> rank_batch(const SamplerOptions& options, std::int64_t epoch,
                                     std::int64_t batch, int rank) {
  (void)options, (void)epoch, (void)batch, (void)rank;
  BOOK_NOT_IMPLEMENTED("ddp.distributed_sampler", "exercises/05_data_parallel/sampler.cc",
                       "chapters/05_data_parallel/README.md, section The distributed sampler");
}

}  // namespace book::ddp
