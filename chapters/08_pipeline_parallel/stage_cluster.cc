// The pipeline stage on the namespace cluster (--backend mpi --cluster, under
// tools/cluster/cluster.sh): every placement of a 2 × 2 grid on 2 nodes × 2 ranks in one launch,
// its step time, the traffic on the slow link and inside the nodes (counted, against the
// formulas), its loss against the same grid on thread ranks, and the α-β model's ranking beside
// the measured one.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "chapters/01_gemm_cpu/sgemm.h"
#include "chapters/03_collectives/cluster.h"
#include "chapters/03_collectives/mpi.h"
#include "chapters/08_pipeline_parallel/placement.h"
#include "chapters/08_pipeline_parallel/stage.h"
#include "common/machine_load.h"
#include "common/table.h"

namespace book::pp::stage {
namespace {

std::string traffic(const LinkTraffic& t) {
  return std::to_string(t.bytes) + " B / " + std::to_string(t.messages);
}

std::string grid_of(const Placement& p) {
  const coll::GridDegrees d = p.degrees();
  std::ostringstream out;
  out << "dp " << d.dp << " x tp " << d.tp << " x pp " << d.pp;
  return out.str();
}

}  // namespace

int run_cluster(const StageOptions& o, int argc, char** argv) {
  coll::MpiSession session(&argc, &argv);
  coll::MpiCommunicator world;
  const coll::ClusterLayout layout = coll::cluster_layout(world.size());
  check_2x2(world.size(), layout);
  if (world.rank() == 0) {
    print_machine_load();
    std::cout << "cluster: " << layout.describe() << "\n"
              << "running the 6 placements of a 2 x 2 grid, " << o.repetitions
              << " interleaved repetitions each (1F1B, FP32) ...\n";
  }
  // One core per rank, as on a real cluster each rank has its own device: sgemm's default of
  // every core per process would put 4 ranks' worker threads on 2 cores, and a step would time
  // their contention (tens of milliseconds), not the placement.
  const gemm::SgemmThreads one_thread(1);
  PlacementOptions options;
  options.repetitions = o.tour ? std::min(o.repetitions, 5) : o.repetitions;
  LinkCosts costs;
  const std::vector<PlacementResult> results = measure_placements(world, layout, options, &costs);
  if (world.rank() != 0) return 0;

  // The same grids on 4 thread ranks in this process (after the timing, so it disturbs none).
  std::map<std::string, double> reference;
  Table table({"placement", "grid", "step ms (median)", "min-max ms", "slow link: bytes / msgs",
               "formula", "in node: bytes / msgs", "formula", "loss", "thread ranks",
               "predicted ms", "measured rank", "predicted rank"});
  bool all_counted = true;
  for (const PlacementResult& r : results) {
    const std::string grid = grid_of(r.placement);
    if (!reference.count(grid)) reference[grid] = thread_reference_loss(r.placement, options);
    const double want = reference[grid];
    const std::string same =
        r.loss == want ? "bit for bit" : "differs by " + fixed(std::fabs(r.loss - want), 9);
    all_counted = all_counted && r.counted.across.bytes == r.predicted.across.bytes &&
                  r.counted.across.messages == r.predicted.across.messages &&
                  r.counted.inside.bytes == r.predicted.inside.bytes &&
                  r.counted.inside.messages == r.predicted.inside.messages;
    table.add_row({r.placement.name(), grid, fixed(r.median_s * 1e3, 2),
                   fixed(r.min_s * 1e3, 2) + "-" + fixed(r.max_s * 1e3, 2),
                   traffic(r.counted.across), traffic(r.predicted.across),
                   traffic(r.counted.inside), traffic(r.predicted.inside), fixed(r.loss, 7), same,
                   fixed(r.predicted_s * 1e3, 2), std::to_string(r.measured_rank),
                   std::to_string(r.predicted_rank)});
  }
  const train::Config& c = options.config;
  std::cout << "\nPlacements of a 2 x 2 grid on " << layout.describe() << ": " << c.n_layer
            << " layers, d_model " << c.d_model << ", " << c.n_head << " heads, vocabulary "
            << c.vocab_size << ", " << options.micro_batches << " micro-batches of "
            << options.batch << " x " << c.context
            << " tokens per replica; step = max over ranks between world barriers.\n"
            << "links (ping-pong in this run): inside a node alpha "
            << fixed(costs.shm_alpha * 1e6, 1) << " us, B " << fixed(costs.shm_bytes_per_s / 1e6, 0)
            << " MB/s; across the link alpha " << fixed(costs.link_alpha * 1e6, 1) << " us, B "
            << fixed(costs.link_bytes_per_s / 1e6, 1) << " MB/s\n"
            << "predicted = t1 (one micro-batch on one device, measured: "
            << fixed(results.front().micro_batch_s * 1e3, 3)
            << " ms) x dp x m / 4 x (m + pp - 1) / m + alpha-beta of the counted per-rank "
               "messages and bytes on each link\n\n"
            << table.markdown() << "\ncounted traffic "
            << (all_counted ? "equals the formulas on every placement"
                            : "DIFFERS from the formulas (see the table)")
            << "\n";
  const std::string dir = results_dir();
  table.write_csv(dir + "/ch08_cluster_placements.csv");
  // For placements.gp: one line per placement, tab-separated.
  std::ofstream dat(dir + "/ch08_cluster_placements.dat");
  dat << "# placement\tmeasured ms (median)\tmin\tmax\tpredicted ms\t" << layout.rate << "\n";
  for (const PlacementResult& r : results)
    dat << r.placement.name() << "\t" << r.median_s * 1e3 << "\t" << r.min_s * 1e3 << "\t"
        << r.max_s * 1e3 << "\t" << r.predicted_s * 1e3 << "\n";
  std::cout << "wrote " << dir << "/ch08_cluster_placements.csv and .dat\n";
  if (o.tour) {
    std::map<std::string, double> ms;
    bool bit_for_bit = true;
    for (const PlacementResult& r : results) {
      ms[r.placement.name()] = r.median_s * 1e3;
      bit_for_bit = bit_for_bit && r.loss == reference[grid_of(r.placement)];
    }
    const double tp_in = ms.at("TP inside / PP across"), tp_out = ms.at("PP inside / TP across");
    std::cout << "tour: 08 | tp 2 x pp 2 on 2 namespace nodes (" << layout.rate
              << "): TP inside the node and PP across, vs the reverse | " << fixed(tp_in, 1)
              << " vs " << fixed(tp_out, 1) << " ms per step (" << fixed(tp_out / tp_in, 1)
              << "x) | TP stays in the node, PP crosses nodes\n"
              << "tour: 08 | the 6 placements' losses vs the same grids on thread ranks | "
              << (bit_for_bit ? "bit for bit" : "DIFFER") << " | where a dimension sits changes "
              << "the time, never the result\n";
  }
  return 0;
}

}  // namespace book::pp::stage
