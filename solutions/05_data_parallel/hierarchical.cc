// Reference for ddp.hierarchical_all_reduce: reduce-scatter in the node, all-reduce across
// nodes on 1/g of the data, all-gather in the node.
#include "chapters/05_data_parallel/hierarchical.h"

#include <cstddef>
#include <vector>

#include "common/check.h"

namespace book::ddp {

//! [hierarchical_all_reduce]
void hierarchical_all_reduce(NodeGroups& groups, coll::Buffer data, coll::ReduceOp op,
                             coll::Algorithm algorithm) {
  BOOK_CHECK(groups.intra && groups.inter,
             "hierarchical_all_reduce: the NodeGroups hold no communicators (a default "
             "NodeGroups{}); make them with split_by_node(world, ranks_per_node)");
  const coll::ReduceOp step_op = op == coll::ReduceOp::kAvg ? coll::ReduceOp::kSum : op;
  const coll::Shard mine = coll::shard_of(data.count, groups.ranks_per_node, groups.local_rank);
  std::vector<std::byte> storage(mine.count * dtype_size(data.dtype));
  const coll::Buffer shard{storage.data(), mine.count, data.dtype};
  groups.intra->reduce_scatter(data, shard, step_op, algorithm);  // fast links, 1/g each
  groups.inter->all_reduce(shard, step_op, algorithm);            // slow links, 1/g of the data
  if (op == coll::ReduceOp::kAvg) coll::scale(shard, 1.0 / (groups.ranks_per_node * groups.nodes));
  groups.intra->all_gather(shard, data, algorithm);  // fast links again
}
//! [hierarchical_all_reduce]

}  // namespace book::ddp
