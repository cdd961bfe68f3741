/// @file
/// What `tools/cluster/cluster.sh run` tells the MPI processes it starts on its namespace
/// "nodes": how many nodes, how many ranks on each (filled node by node: rank r sits on node
/// r / ranks_per_node), the rate the slow link between nodes was given (`tc tbf`) and the raw TCP
/// throughput measured across it when the cluster was made, the ceiling any collective across
/// nodes can reach. The stages that measure across the link read it here, so a table always
/// prints the link it was measured on.
#pragma once

#include <string>

namespace book::coll {

/// The namespace cluster a process runs in, from the environment cluster.sh sets.
struct ClusterLayout {
  int nodes = 1;                ///< M: namespace nodes (BOOK_CLUSTER_NODES)
  int ranks_per_node = 1;       ///< g: MPI processes on each (BOOK_CLUSTER_RANKS_PER_NODE)
  double link_bits_per_s = 0;   ///< the tbf rate on each node's link (BOOK_CLUSTER_RATE_BITS)
  double tcp_bytes_per_s = 0;   ///< raw TCP node 0 → node 1 measured at set-up; 0: not measured
  std::string rate;             ///< the rate as given to tc, e.g. "1gbit" (BOOK_CLUSTER_RATE)

  /// The node world rank `rank` sits on: rank / ranks_per_node.
  int node_of(int rank) const { return rank / ranks_per_node; }
  /// "2 nodes x 2 ranks, links of 1gbit (raw TCP measured 117.3 MB/s)".
  std::string describe() const;
};

/// Whether this process was started by cluster.sh (BOOK_CLUSTER_NODES is set).
bool in_cluster();

/// The layout cluster.sh set for a world of `world_size` ranks. Throws book::Error when the
/// process was not started by cluster.sh (saying how to run under it), when a variable does not
/// parse, or when nodes × ranks_per_node is not world_size.
ClusterLayout cluster_layout(int world_size);

}  // namespace book::coll
