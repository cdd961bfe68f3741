// The cluster's own check, run by cluster.sh as any MPI program is:
//
//   tools/cluster/cluster.sh run -- $(readlink -f bazel-bin/tools/cluster/cluster_probe) [--mib 4]
//
// 1. Every rank sits where the layout says: on node rank / ranks_per_node, whose hostname the
//    agent set to bookc-node<k>, with the local rank and size OpenMPI gives it.
// 2. The book's ring all-reduce of `--mib` MiB over the whole world gives the exact sum.
// 3. The bytes really crossed the link: each node's eth0 sent at least the payload the ring's
//    cross-node steps counted (a ring whose next rank is on another node sends everything there).
//    Shared memory between nodes would leave eth0 silent, and this check fails.
// With --seconds S it then keeps all-reducing for S seconds with the communicator's --timeout-ms:
// the failure drill (cluster.sh --cut-link) must end in the timeout error naming the rank.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "chapters/03_collectives/cluster.h"
#include "chapters/03_collectives/mpi.h"
#include "common/check.h"
#include "common/flags.h"
#include "common/main.h"
#include "common/table.h"
#include "common/timer.h"

namespace {

using namespace book;
using namespace book::coll;

std::uint64_t eth0_tx_bytes() {
  std::ifstream in("/sys/class/net/eth0/statistics/tx_bytes");
  std::uint64_t bytes = 0;
  BOOK_CHECK(in >> bytes, "cannot read /sys/class/net/eth0/statistics/tx_bytes: is this process "
                          "inside a cluster node's namespace?");
  return bytes;
}

int env_int(const char* name) {
  const char* value = std::getenv(name);
  return value ? std::atoi(value) : -1;
}

void check_placement(const ClusterLayout& layout, int rank) {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  const int node = layout.node_of(rank);
  const std::string expected = "bookc-node" + std::to_string(node);
  BOOK_CHECK(host == expected, "rank " << rank << " runs on host '" << host << "' but the layout "
                                       << "puts it on node " << node << " (" << expected << ")");
  const int local_rank = env_int("OMPI_COMM_WORLD_LOCAL_RANK");
  const int local_size = env_int("OMPI_COMM_WORLD_LOCAL_SIZE");
  BOOK_CHECK(local_rank == rank % layout.ranks_per_node && local_size == layout.ranks_per_node,
             "rank " << rank << ": OpenMPI says local rank " << local_rank << " of " << local_size
                     << ", the layout says " << rank % layout.ranks_per_node << " of "
                     << layout.ranks_per_node);
}

int body(int argc, char** argv) {
  MpiSession session(&argc, &argv, MpiThreads::kFunneled);
  int mib = 4, timeout_ms = 30000;
  double seconds = 0;
  bool tour = false;
  Flags flags(argv[0], "checks the namespace cluster: placement, an exact all-reduce, traffic on "
                       "the link");
  flags.add("mib", &mib, "the all-reduce's size in MiB").range(1, 256);
  flags.add("seconds", &seconds, "then keep all-reducing this long (the failure drill)")
      .range(0, 3600);
  flags.add("timeout-ms", &timeout_ms, "the communicator's timeout").range(100, 600000);
  flags.add("tour", &tour, "also print the tour's line: raw TCP across the link against its rate");
  flags.parse(argc, argv);
  MpiCommunicator world;
  world.set_timeout(std::chrono::milliseconds(timeout_ms));
  const ClusterLayout layout = cluster_layout(world.size());
  const int rank = world.rank(), n = world.size();
  check_placement(layout, rank);

  const std::size_t count = (static_cast<std::size_t>(mib) << 20) / sizeof(float);
  std::vector<float> data(count);
  for (std::size_t i = 0; i < count; ++i) data[i] = static_cast<float>(rank + 1 + (i % 7));
  const bool first_on_node = rank % layout.ranks_per_node == 0;
  world.barrier();
  const std::uint64_t tx_before = first_on_node ? eth0_tx_bytes() : 0;
  world.reset_counters();
  Timer timer;
  world.all_reduce(std::span<float>(data), ReduceOp::kSum, Algorithm::kRing);
  const double elapsed = timer.seconds();
  const std::uint64_t sent = world.counters().bytes_sent;
  world.barrier();
  const std::uint64_t tx_after = first_on_node ? eth0_tx_bytes() : 0;

  for (std::size_t i = 0; i < count; ++i) {
    const float expected = static_cast<float>(n * (n + 1) / 2 + n * static_cast<int>(i % 7));
    BOOK_CHECK(data[i] == expected, "rank " << rank << ": element " << i << " is " << data[i]
                                            << " after the all-reduce, not " << expected);
  }
  // Per node: what its ranks sent to a next rank on another node, against what eth0 sent.
  const bool next_off_node = layout.node_of((rank + 1) % n) != layout.node_of(rank);
  std::vector<double> mine(2 * layout.nodes, 0.0);
  mine[2 * layout.node_of(rank)] = next_off_node ? static_cast<double>(sent) : 0.0;
  mine[2 * layout.node_of(rank) + 1] = static_cast<double>(tx_after - tx_before);
  world.all_reduce(std::span<double>(mine), ReduceOp::kSum, Algorithm::kRing);
  if (rank == 0) {
    std::printf("probe: %s; placement checked on every rank; ring all-reduce of %d MiB exact in "
                "%.3f s\n",
                layout.describe().c_str(), mib, elapsed);
    for (int node = 0; node < layout.nodes && n > 1; ++node)
      std::printf("probe: node %d: ring payload to other nodes %.0f bytes, eth0 sent %.0f bytes\n",
                  node, mine[2 * node], mine[2 * node + 1]);
  }
  if (rank == 0 && tour && layout.tcp_bytes_per_s > 0 && layout.link_bits_per_s > 0)
    std::printf("tour: 03 | raw TCP across one namespace link (tc tbf %s) | %.1f MB/s = %.0f%% of "
                "the rate | a cluster is only as fast as its links: every number across nodes is "
                "bounded by this one\n",
                layout.rate.c_str(), layout.tcp_bytes_per_s / 1e6,
                100 * layout.tcp_bytes_per_s * 8 / layout.link_bits_per_s);
  for (int node = 0; node < layout.nodes; ++node)
    BOOK_CHECK(mine[2 * node + 1] >= mine[2 * node],
               "node " << node << "'s eth0 sent " << mine[2 * node + 1] << " bytes but its ranks "
                       << "sent " << mine[2 * node] << " to other nodes: the traffic did not take "
                       << "the link (shared memory between nodes?)");

  if (seconds > 0) {
    Timer drill;
    int rounds = 0;
    while (drill.seconds() < seconds) {  // kMax: the values stay what they are
      world.all_reduce(std::span<float>(data), ReduceOp::kMax, Algorithm::kRing);
      ++rounds;
    }
    if (rank == 0) std::printf("probe: %d more all-reduces in %.1f s\n", rounds, seconds);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return book::run_main(argc, argv, body); }
