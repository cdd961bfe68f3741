// bazel run //chapters/08_pipeline_parallel:pipeline [-- --schedule 1f1b --stages 4
//   --micro-batches 8] [--schedule all] [--tour]                       (--help lists the flags)
// tools/cluster/cluster.sh run -- $(readlink -f bazel-bin/chapters/08_pipeline_parallel/pipeline)
//   --backend mpi --cluster           (the placements of a 2 x 2 grid on 2 namespace nodes)
//
// Pipeline parallelism, measured: each schedule's bubble from the simulator with unit costs
// against the formula, the activations each rank holds at its peak, the messages and bytes that
// cross the stage boundaries, and a real step on p thread ranks (chapter 4's model parts talking
// through chapter 3's Communicator) whose loss is compared with the one-device step; stage
// balancing; DP × TP × PP on 8 thread ranks. Writes the tables (CSV, JSON), each schedule's
// simulated timeline (.tsv for timeline.gp) and the real run's Chrome trace into the results
// folder. The sections are in stage.h.
#include <iostream>

#include "chapters/08_pipeline_parallel/stage.h"
#include "common/machine_load.h"
#include "common/main.h"

namespace {

using namespace book::pp::stage;

int body(int argc, char** argv) {
  const StageOptions o = parse_stage_options(argc, argv);
  if (o.cluster) return run_cluster(o, argc, argv);
  if (o.backend == "mpi") return run_mpi(o, argc, argv);
  book::print_machine_load();
  if (o.tour)
    std::cout << "tour-config: 08 | pipeline --tour: p = 4 thread ranks, m = 8 micro-batches, "
                 "v = 2 chunks (interleaved), 8 layers, d_model 32 (the chapter's run: "
                 "`pipeline --schedule all`, the same shape)\n";
  const std::vector<ScheduleRow> rows = run_schedules(o);
  const std::vector<Balance> balances = run_balance();
  const ThreeD three_d = run_three_d();
  if (o.tour) print_tour(rows, balances, three_d);
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return book::run_main(argc, argv, body); }
