/// @file
/// Hierarchical all-reduce: what NCCL and Horovod do when ranks sit in nodes of g GPUs joined by a
/// slower network. Three collectives instead of one flat ring over all N = g·M ranks:
/// 1. reduce-scatter inside the node (fast links): local rank l ends with shard l of the node's
///    sum, 1/g of the buffer;
/// 2. all-reduce of that shard across the M nodes, among the ranks with the same local rank
///    (one ring per local rank, so all g NICs of a node work at once);
/// 3. all-gather inside the node: every rank gets the whole result.
///
/// What crosses the network per rank is 2(M−1)/M · S/g, instead of a flat ring's 2(N−1)/N · S on
/// the ranks whose ring neighbour is on another node, and the latency term on the slow links is
/// 2(M−1)α instead of 2(N−1)α. The groups come from chapter 3's Communicator::split.
#pragma once

#include <cstdint>
#include <memory>

#include "chapters/03_collectives/communicator.h"

namespace book::ddp {

/// This rank's two groups when the world is cut into nodes of consecutive ranks.
struct NodeGroups {
  std::unique_ptr<coll::Communicator> intra;  ///< the ranks of this node; rank = local rank
  std::unique_ptr<coll::Communicator>
      inter;               ///< one rank per node, all with this local rank; rank = node
  int ranks_per_node = 1;  ///< g
  int nodes = 1;           ///< M = N / g
  int node = 0;            ///< world rank / g
  int local_rank = 0;      ///< world rank mod g
};

/// Splits `world` into nodes of `ranks_per_node` consecutive ranks (every rank calls it). The
/// groups are named "<world>/node<k>" and "<world>/cross<l>". Throws book::Error unless
/// ranks_per_node ≥ 1 divides world.size().
NodeGroups split_by_node(coll::Communicator& world, int ranks_per_node);

/// Exercise ddp.hierarchical_all_reduce: every rank's `data` becomes the reduction over all ranks
/// of the world `groups` was split from, in three steps: (1) groups.intra->reduce_scatter of
/// `data` into this local rank's shard (coll::shard_of(count, g, local_rank)), summing;
/// (2) groups.inter->all_reduce of that shard, summing; for kAvg, then scale it by 1/N
/// (coll::scale); (3) groups.intra->all_gather of the shard back into `data`. Use `algorithm` for
/// all three. kMax works the same with kMax in place of the sums. First throw book::Error if
/// groups.intra or groups.inter is null (a default NodeGroups{}, not made by split_by_node).
/// \exercise{ddp.hierarchical_all_reduce}
void hierarchical_all_reduce(NodeGroups& groups, coll::Buffer data, coll::ReduceOp op,
                             coll::Algorithm algorithm = coll::Algorithm::kRing);

/// Bytes all ranks together send across node boundaries in one flat ring all-reduce of `count`
/// elements of `element_bytes` over `world` ranks in nodes of `ranks_per_node` consecutive ranks:
/// rank r sends 2·count − shard(r) − shard(r+1) elements, all to rank r+1 mod N, and they cross
/// when that rank is on another node.
std::uint64_t flat_ring_cross_node_bytes(std::size_t count, std::size_t element_bytes, int world,
                                         int ranks_per_node);

/// The same for hierarchical_all_reduce with the ring: only step 2 crosses nodes; local rank l's
/// ring over M nodes moves its shard of shard_of(count, g, l).count elements.
std::uint64_t hierarchical_cross_node_bytes(std::size_t count, std::size_t element_bytes, int world,
                                            int ranks_per_node);

}  // namespace book::ddp
