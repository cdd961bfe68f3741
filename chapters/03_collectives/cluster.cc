// The layout tools/cluster/cluster.sh hands its MPI processes (cluster.h).
#include "chapters/03_collectives/cluster.h"

#include <cstdlib>
#include <sstream>
#include <string>

#include "common/check.h"
#include "common/table.h"

namespace book::coll {
namespace {

const char* variable(const char* name) {
  const char* value = std::getenv(name);
  return value && *value ? value : nullptr;
}

// A whole non-negative number in a variable cluster.sh sets; refuses anything else by name.
double number(const char* name, bool required) {
  const char* text = variable(name);
  if (!text) {
    BOOK_CHECK(!required, name << " is not set: cluster.sh sets it for the processes it starts; "
                                  "run this under tools/cluster/cluster.sh run");
    return 0;
  }
  char* end = nullptr;
  const double value = std::strtod(text, &end);
  BOOK_CHECK(end != text && *end == '\0' && value >= 0 && value < 1e18,
             name << "='" << text << "' is not a non-negative number");
  return value;
}

}  // namespace

bool in_cluster() { return variable("BOOK_CLUSTER_NODES") != nullptr; }

ClusterLayout cluster_layout(int world_size) {
  BOOK_CHECK(in_cluster(), "this needs the namespace cluster: run it as tools/cluster/cluster.sh "
                           "run [--nodes M] [--ranks-per-node G] -- PROGRAM ... (as root; see "
                           "tools/cluster/README.md)");
  ClusterLayout layout;
  const double nodes = number("BOOK_CLUSTER_NODES", true);
  const double per_node = number("BOOK_CLUSTER_RANKS_PER_NODE", true);
  BOOK_CHECK(nodes >= 1 && per_node >= 1 && nodes == static_cast<int>(nodes) &&
                 per_node == static_cast<int>(per_node),
             "BOOK_CLUSTER_NODES=" << nodes << " and BOOK_CLUSTER_RANKS_PER_NODE=" << per_node
                                   << " must be whole numbers of at least 1");
  layout.nodes = static_cast<int>(nodes);
  layout.ranks_per_node = static_cast<int>(per_node);
  BOOK_CHECK(layout.nodes * layout.ranks_per_node == world_size,
             "the cluster has " << layout.nodes << " nodes x " << layout.ranks_per_node
                                << " ranks but MPI started " << world_size
                                << " processes: let cluster.sh run start them (it passes -np)");
  layout.link_bits_per_s = number("BOOK_CLUSTER_RATE_BITS", false);
  layout.tcp_bytes_per_s = number("BOOK_CLUSTER_TCP_BYTES_PER_S", false);
  if (const char* rate = variable("BOOK_CLUSTER_RATE")) layout.rate = rate;
  return layout;
}

std::string ClusterLayout::describe() const {
  std::ostringstream out;
  out << nodes << " node" << (nodes == 1 ? "" : "s") << " x " << ranks_per_node << " rank"
      << (ranks_per_node == 1 ? "" : "s") << ", "
      << (rate == "none" ? "unlimited links" : "links of " + (rate.empty() ? "?" : rate));
  if (tcp_bytes_per_s > 0) out << " (raw TCP measured " << fixed(tcp_bytes_per_s / 1e6, 1) << " MB/s)";
  return out.str();
}

}  // namespace book::coll
