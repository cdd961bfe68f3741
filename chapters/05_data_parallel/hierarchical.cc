// The node groups and the exact cross-node byte counts. hierarchical_all_reduce, the exercise,
// is in solutions/05_data_parallel/hierarchical.cc.
#include "chapters/05_data_parallel/hierarchical.h"

#include "common/check.h"

namespace book::ddp {
namespace {

// Elements rank r of n sends in a ring all-reduce of `count` (chapter 3: every chunk but its
// own in the reduce-scatter, every chunk but (r+1)'s in the all-gather).
std::uint64_t ring_sent(std::size_t count, int n, int r) {
  if (n == 1) return 0;
  return 2 * count - coll::shard_of(count, n, r).count -
         coll::shard_of(count, n, (r + 1) % n).count;
}

void check_nodes(int world, int ranks_per_node) {
  BOOK_CHECK(ranks_per_node >= 1 && world >= 1 && world % ranks_per_node == 0,
             "nodes of " << ranks_per_node << " ranks do not divide the world of " << world
                         << " ranks: choose ranks per node that divide it");
}

}  // namespace

NodeGroups split_by_node(coll::Communicator& world, int ranks_per_node) {
  check_nodes(world.size(), ranks_per_node);
  NodeGroups groups;
  groups.ranks_per_node = ranks_per_node;
  groups.nodes = world.size() / ranks_per_node;
  groups.node = world.rank() / ranks_per_node;
  groups.local_rank = world.rank() % ranks_per_node;
  groups.intra = world.split(groups.node, groups.local_rank);
  groups.intra->set_group_name(world.group() + "/node" + std::to_string(groups.node));
  groups.inter = world.split(groups.local_rank, groups.node);
  groups.inter->set_group_name(world.group() + "/cross" + std::to_string(groups.local_rank));
  return groups;
}

std::uint64_t flat_ring_cross_node_bytes(std::size_t count, std::size_t element_bytes, int world,
                                         int ranks_per_node) {
  check_nodes(world, ranks_per_node);
  std::uint64_t elements = 0;
  for (int r = 0; r < world; ++r)
    if (r / ranks_per_node != ((r + 1) % world) / ranks_per_node)
      elements += ring_sent(count, world, r);
  return elements * element_bytes;
}

std::uint64_t hierarchical_cross_node_bytes(std::size_t count, std::size_t element_bytes, int world,
                                            int ranks_per_node) {
  check_nodes(world, ranks_per_node);
  const int nodes = world / ranks_per_node;
  std::uint64_t elements = 0;
  for (int local = 0; local < ranks_per_node; ++local) {
    const std::size_t shard = coll::shard_of(count, ranks_per_node, local).count;
    for (int node = 0; node < nodes; ++node) elements += ring_sent(shard, nodes, node);
  }
  return elements * element_bytes;
}

}  // namespace book::ddp
