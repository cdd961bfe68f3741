// busbw_mpi --cluster: all-reduce across a real (namespace) network. Under
// tools/cluster/cluster.sh the world is M nodes of g ranks (cluster.h); the same all-reduce is
// timed on three placements in one launch: inside a node (node 0's g ranks, shared memory),
// across nodes (one rank per node: only the slow link) and on the whole world (a ring that crosses
// the link twice). The across-node busbw is held against the rate tc gave the link and the raw TCP
// throughput cluster.sh measured across it.
//
//   tools/cluster/cluster.sh run --nodes 2 --ranks-per-node 2 --
//     "$(readlink -f bazel-bin/chapters/03_collectives/busbw_mpi)" --cluster   (one line)
#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "chapters/03_collectives/busbw_table.h"
#include "chapters/03_collectives/cluster.h"
#include "chapters/03_collectives/communicator.h"
#include "chapters/03_collectives/stage.h"
#include "common/table.h"
#include "common/timer.h"

namespace book::coll::stage {
namespace {

// One placement: the group its ranks all-reduce on, and whether this rank is in the measured one
// (the others wait at the world's barrier, so only one group uses the machine at a time).
struct Placement {
  std::string name;
  Communicator* group = nullptr;
  bool active = false;
  int ranks = 0;
  bool crosses = false;  // its busbw is bounded by the slow link
};

// Seconds per all-reduce on the active group, one batch of `reps` calls after a warm-up: the
// slowest active rank's time (every rank of `world` calls it).
double time_batch(Communicator& world, const Placement& p, std::vector<float>& data,
                  Algorithm algorithm, int reps) {
  double mine = 0;
  if (p.active) p.group->all_reduce(std::span<float>(data), ReduceOp::kSum, algorithm);
  world.barrier();
  if (p.active) {
    const Timer timer;
    for (int i = 0; i < reps; ++i)
      p.group->all_reduce(std::span<float>(data), ReduceOp::kSum, algorithm);
    mine = timer.seconds() / reps;
  }
  world.all_reduce(std::span<double>(&mine, 1), ReduceOp::kMax);
  return mine;
}

std::string share(double part, double whole) {
  return whole > 0 ? fixed(100 * part / whole, 0) + "%" : "-";
}

}  // namespace

TourLines cluster_section(const StageOptions& options, Communicator& world) {
  const ClusterLayout layout = cluster_layout(world.size());
  const int g = layout.ranks_per_node, node = layout.node_of(world.rank());
  const int local = world.rank() % g;
  const std::unique_ptr<Communicator> intra = world.split(node, local);
  intra->set_group_name(world.group() + "/node" + std::to_string(node));
  const std::unique_ptr<Communicator> cross = world.split(local, node);
  cross->set_group_name(world.group() + "/cross" + std::to_string(local));
  std::vector<Placement> placements;
  if (g > 1) placements.push_back({"inside a node", intra.get(), node == 0, g, false});
  if (layout.nodes > 1)
    placements.push_back({"across nodes", cross.get(), local == 0, layout.nodes, true});
  placements.push_back({"whole world", &world, true, world.size(), layout.nodes > 1});

  const std::size_t max_bytes = static_cast<std::size_t>(options.max_mib) << 20;
  const std::size_t small = std::min<std::size_t>(4096, max_bytes);
  const std::size_t middle = std::clamp<std::size_t>(max_bytes / 64, small, max_bytes);
  std::vector<std::size_t> sizes = {small, middle, max_bytes};
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  const Algorithm algorithms[] = {Algorithm::kRing, Algorithm::kTree, Algorithm::kNative};
  const double link_bytes_per_s = layout.link_bits_per_s / 8;
  const bool root = world.rank() == 0;

  Table table({"size", "placement", "ranks", "algorithm", "time (us)", "busbw (GB/s)", "spread",
               "busbw / link rate", "busbw / raw TCP"});
  // busbw (GB/s) of the ring and MPI_Allreduce by size and placement, for the tour and the picture
  std::map<std::size_t, std::map<std::string, double>> ring, native;
  std::vector<float> data;
  for (std::size_t bytes : sizes) {
    data.assign(bytes / sizeof(float), 1.0f + static_cast<float>(world.rank()));
    // A batch moves about 4 MiB per rank (one call at 16 MiB; 200 at 4 KiB).
    const int reps = repetitions_for(bytes, 4u << 20);
    std::map<std::pair<int, Algorithm>, std::vector<double>> seconds;
    for (int round = 0; round < options.repetitions; ++round) {
      if (root)
        std::fprintf(stderr, "[busbw_mpi --cluster] %s x %d, round %d of %d ...\n",
                     format_bytes(bytes).c_str(), reps, round + 1, options.repetitions);
      for (int p = 0; p < static_cast<int>(placements.size()); ++p)
        for (Algorithm algo : algorithms)
          seconds[{p, algo}].push_back(time_batch(world, placements[p], data, algo, reps));
    }
    for (int p = 0; p < static_cast<int>(placements.size()); ++p) {
      const Placement& place = placements[p];
      for (Algorithm algo : algorithms) {
        std::vector<double> busbw;
        for (double s : seconds[{p, algo}])
          busbw.push_back(algbw_gbs(bytes, s) * all_reduce_bus_factor(place.ranks));
        const double bus = median(busbw);
        const double t = median(seconds[{p, algo}]);
        if (algo == Algorithm::kRing) ring[bytes][place.name] = bus;
        if (algo == Algorithm::kNative) native[bytes][place.name] = bus;
        table.add_row({format_bytes(bytes), place.name, std::to_string(place.ranks),
                       algo == Algorithm::kNative ? "MPI_Allreduce" : algorithm_name(algo),
                       fixed(t * 1e6, 1), fixed(bus, 4),
                       fixed(100 * relative_spread(busbw), 1) + "%",
                       place.crosses ? share(bus * 1e9, link_bytes_per_s) : "-",
                       place.crosses ? share(bus * 1e9, layout.tcp_bytes_per_s) : "-"});
      }
    }
  }
  if (!root) return {};
  std::printf(
      "## Across a network: the namespace cluster\n\n%s. All-reduce (sum, f32); busbw = algbw x "
      "2(n-1)/n for the n ranks of the placement; inside a node = node 0's ranks (shared "
      "memory), across nodes = one rank per node (the slow link only), whole world = all ranks; "
      "medians of %d rounds taken in turns, spread = (max - min) / median of the busbw; link "
      "rate = %.0f MB/s (tbf), raw TCP = the ceiling cluster.sh measured\n\n%s\n",
      layout.describe().c_str(), options.repetitions, link_bytes_per_s / 1e6,
      table.markdown().c_str());
  table.write_csv(results_dir() + "/ch03_cluster_busbw.csv");
  TourLines tour;
  if (layout.nodes > 1 && g > 1) {
    const std::size_t big = sizes.back();
    const double in = ring.at(big).at("inside a node"), across = ring.at(big).at("across nodes");
    char line[512];
    std::snprintf(line, sizeof line,
                  "tour: 03 | ring busbw inside a node vs across nodes (cluster, %s, %s) | %.3f "
                  "vs %.4f GB/s = %.0fx; across = %s of the link's rate | a collective that "
                  "crosses nodes runs at the network's pace, not shared memory's\n",
                  layout.rate.c_str(), format_bytes(big).c_str(), in, across, in / across,
                  share(across * 1e9, link_bytes_per_s).c_str());
    tour += line;
    std::snprintf(line, sizeof line,
                  "tour: 03 | whole-world busbw, book ring vs MPI_Allreduce (cluster, %s) | %.4f "
                  "vs %.4f GB/s | across the link the plain ring is at least as fast as MPI's tuned choice\n",
                  format_bytes(big).c_str(), ring.at(big).at("whole world"),
                  native.at(big).at("whole world"));
    tour += line;
  }
  return tour;
}

}  // namespace book::coll::stage
