// Exercise ddp.hierarchical_all_reduce — write hierarchical_all_reduce (declared in
// chapters/05_data_parallel/hierarchical.h):
//   0. refuse groups whose intra or inter communicator is null (a book::Error: a default
//      NodeGroups{} was not made by split_by_node);
//   1. a shard buffer of coll::shard_of(data.count, groups.ranks_per_node, groups.local_rank)
//      elements of data.dtype; groups.intra->reduce_scatter(data, shard, sum or max, algorithm);
//   2. groups.inter->all_reduce(shard, sum or max, algorithm); for kAvg, coll::scale(shard, 1/N)
//      with N = ranks_per_node · nodes;
//   3. groups.intra->all_gather(shard, data, algorithm).
// Graded by tests/05_data_parallel/hierarchical_test.cc (16 thread ranks, bytes across nodes
// counted):  bazel test --config=exercises //tests/05_data_parallel:hierarchical_test
#include "chapters/05_data_parallel/hierarchical.h"
#include "common/check.h"

namespace book::ddp {

void hierarchical_all_reduce(NodeGroups& groups, coll::Buffer data, coll::ReduceOp op,
                             coll::Algorithm algorithm) {
  (void)groups, (void)data, (void)op, (void)algorithm;
  BOOK_NOT_IMPLEMENTED("ddp.hierarchical_all_reduce", "exercises/05_data_parallel/hierarchical.cc",
                       "chapters/05_data_parallel/README.md, section Hierarchical all-reduce");
}

}  // namespace book::ddp
