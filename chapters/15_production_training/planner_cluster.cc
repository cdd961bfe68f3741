// planner --cluster, under tools/cluster/cluster.sh (2 nodes × 2 ranks): the planner's ranking
// held against measured step times. Chapter 8's measure_placements times the six placements of a
// 2 × 2 grid in this launch and measures the links (ping-pongs inside a node and across) and t1,
// one micro-batch on one device; the planner is then given those measured figures as its cluster,
// and for each grid it says which of the two placements wins. The table sets its modelled step
// beside the measured one, placement by placement.
#include "chapters/15_production_training/planner_cluster.h"

#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

#include "chapters/01_gemm_cpu/sgemm.h"
#include "chapters/03_collectives/cluster.h"
#include "chapters/03_collectives/mpi.h"
#include "chapters/08_pipeline_parallel/placement.h"
#include "chapters/09_memory_accounting/model_shape.h"
#include "chapters/15_production_training/planner.h"
#include "common/check.h"
#include "common/machine_load.h"
#include "common/table.h"

namespace book::prod {
namespace {

bool crosses(const Plan& plan, pp::Dim dim) {
  return dim == pp::Dim::kTp ? plan.tp_crosses : dim == pp::Dim::kDp ? plan.dp_crosses
                                                                     : plan.pp_crosses;
}

// The planner's plan for `placement`: its degrees, the placements' micro-batch, plain DP, and
// the same dimension across the link.
const Plan& plan_for(const std::vector<Plan>& plans, const pp::Placement& placement, int batch) {
  const coll::GridDegrees d = placement.degrees();
  for (const Plan& p : plans)
    if (p.dp == d.dp && p.tp == d.tp && p.pp == d.pp && p.micro_batch == batch &&
        p.zero == zero::Stage::kDdp && crosses(p, placement.across) &&
        !crosses(p, placement.inside))
      return p;
  BOOK_CHECK(false, "the planner has no plan for " << placement.name() << " (a planner bug)");
  return plans.front();
}

}  // namespace

PlanInput placements_plan_input(const pp::PlacementOptions& options, const pp::LinkCosts& costs,
                                double micro_batch_s, int dp) {
  BOOK_CHECK(micro_batch_s > 0 && costs.shm_bytes_per_s > 0 && costs.link_bytes_per_s > 0,
             "placements_plan_input: the measured t1 and bandwidths must be positive");
  PlanInput in;
  in.shape = mem::from_book_config(options.config);
  in.seq = options.config.context;
  in.precision = DType::kF32;
  in.zero_stages = {zero::Stage::kDdp};
  in.micro_batch_sizes = {options.batch};
  // The planner's FLOPs of one micro-batch on one device, over the measured t1: the sustained
  // FLOP/s that makes the planner's compute term t1 per micro-batch, as chapter 8's model has it.
  PlanInput one = in;
  one.global_batch = options.batch;
  one.cluster.nodes = one.cluster.devices_per_node = 1;
  one.cluster.memory_bytes = 1e12;
  one.cluster.flops_per_s = 1;
  one.cluster.intra = one.cluster.inter = {0, 1};
  const double flops = rank_plans(one).front().compute_s;  // seconds at 1 FLOP/s = FLOPs
  in.global_batch = static_cast<std::int64_t>(dp) * options.micro_batches * options.batch;
  in.cluster.name = "the namespace cluster (measured)";
  in.cluster.nodes = 2;
  in.cluster.devices_per_node = 2;
  in.cluster.memory_bytes = 1e12;
  in.cluster.flops_per_s = flops / micro_batch_s;
  in.cluster.intra = {costs.shm_alpha, costs.shm_bytes_per_s};
  in.cluster.inter = {costs.link_alpha, costs.link_bytes_per_s};
  in.cluster.source = "ping-pongs and t1 measured in this run";
  return in;
}

int run_planner_cluster(int argc, char** argv, bool tour) {
  coll::MpiSession session(&argc, &argv);
  coll::MpiCommunicator world;
  const coll::ClusterLayout layout = coll::cluster_layout(world.size());
  pp::check_2x2(world.size(), layout);
  if (world.rank() == 0) {
    print_machine_load();
    std::cout << "cluster: " << layout.describe()
              << "\nmeasuring the 6 placements of a 2 x 2 grid (chapter 8) ...\n";
  }
  const gemm::SgemmThreads one_thread(1);  // a core per rank, as chapter 8's stage runs it
  pp::PlacementOptions options;
  if (tour) options.repetitions = 5;
  pp::LinkCosts costs;
  const std::vector<pp::PlacementResult> measured =
      pp::measure_placements(world, layout, options, &costs);
  if (world.rank() != 0) return 0;

  const double t1 = measured.front().micro_batch_s;
  std::vector<std::vector<Plan>> plans_by_dp(3);
  Table table({"grid", "placement", "measured ms", "planner ms", "measured: wins?",
               "planner: wins?", "agree"});
  int grids = 0, agreed = 0;
  std::string tp_sentence;
  for (std::size_t i = 0; i + 1 < measured.size(); i += 2) {
    const pp::PlacementResult& a = measured[i];
    const pp::PlacementResult& b = measured[i + 1];
    const int dp = a.placement.degrees().dp;
    if (plans_by_dp[dp].empty())
      plans_by_dp[dp] = rank_plans(placements_plan_input(options, costs, t1, dp));
    const Plan& pa = plan_for(plans_by_dp[dp], a.placement, options.batch);
    const Plan& pb = plan_for(plans_by_dp[dp], b.placement, options.batch);
    const bool measured_a = a.median_s <= b.median_s, planned_a = pa.step_s <= pb.step_s;
    ++grids;
    agreed += measured_a == planned_a;
    const coll::GridDegrees d = a.placement.degrees();
    const std::string grid = "dp" + std::to_string(d.dp) + " tp" + std::to_string(d.tp) + " pp" +
                             std::to_string(d.pp);
    for (int k = 0; k < 2; ++k) {
      const pp::PlacementResult& r = k == 0 ? a : b;
      const Plan& p = k == 0 ? pa : pb;
      const bool m_wins = (k == 0) == measured_a, p_wins = (k == 0) == planned_a;
      table.add_row({grid, r.placement.name(), fixed(r.median_s * 1e3, 2),
                     fixed(p.step_s * 1e3, 2), m_wins ? "yes" : "no", p_wins ? "yes" : "no",
                     measured_a == planned_a ? "yes" : "NO"});
    }
    if (d.tp == 2 && d.pp == 2)
      tp_sentence = planned_a ? why_ahead(pa, pb) : why_ahead(pb, pa);
  }
  std::cout << "\n## The planner against the measured placements\n\n"
            << "The planner's cluster is this one, measured in this run: inside a node alpha "
            << fixed(costs.shm_alpha * 1e6, 1) << " us, B " << fixed(costs.shm_bytes_per_s / 1e6, 0)
            << " MB/s; across the link alpha " << fixed(costs.link_alpha * 1e6, 1) << " us, B "
            << fixed(costs.link_bytes_per_s / 1e6, 1) << " MB/s; t1 (one micro-batch of "
            << options.batch << " on one device) " << fixed(t1 * 1e3, 3)
            << " ms. Model: chapter 8's placements' (" << options.config.n_layer
            << " layers, d_model " << options.config.d_model << ", " << options.micro_batches
            << " micro-batches per replica), FP32, plain DP.\n\n"
            << table.markdown() << "\nThe planner picks the measured winner in " << agreed
            << " of " << grids << " grids. tp 2 x pp 2: " << tp_sentence << ".\n";
  table.write_csv(results_dir() + "/ch15_planner_cluster.csv");
  if (tour)
    std::cout << "tour: 15 | planner vs measured on the namespace cluster (" << layout.rate
              << "): which dimension of a 2 x 2 grid should cross the link | agrees in " << agreed
              << " of " << grids << " grids | the decision order (fast links for TP) holds on a "
              << "real link\n";
  return 0;
}

}  // namespace book::prod
