// bazel run -c opt //chapters/05_data_parallel:ddp [-- --tour] [--ranks 1,2,4] [--rungs ...]
// mpirun -np 2 bazel-bin/chapters/05_data_parallel/ddp --backend mpi   (--help lists the flags)
// tools/cluster/cluster.sh run -- "$(readlink -f bazel-bin/chapters/05_data_parallel/ddp)"
//   --backend mpi --cluster   (one line: across the namespace cluster, stage_cluster.cc)
//
// Data parallelism, measured: the ladder (per-tensor, flat, buckets, no-sync) at every N, each
// row held against chapter 4's one-device run; the overlap trace; the scaling model from 8 to 64
// GPUs with α-β measured here; hierarchical bytes across nodes; the bottleneck classifier on
// injected delays; uneven work; a failure and the restart. The steps are in stage.h.
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "chapters/03_collectives/mpi.h"
#include "chapters/05_data_parallel/ddp_trainer.h"
#include "chapters/05_data_parallel/stage.h"
#include "common/machine_load.h"
#include "common/main.h"
#include "common/table.h"

namespace {

using namespace book::ddp;
using namespace book::ddp::stage;

void print_header(const StageOptions& o, int world) {
  const DdpOptions run = resolve(run_options(o, Rung::kFlat), 1);
  const auto& c = run.train.model;
  std::cout << "# Chapter 5: data parallelism\n\n"
            << "model:     " << c.n_layer << " layers, d_model " << c.d_model << ", " << c.n_head
            << " heads: " << c.parameter_count() << " parameters, "
            << mib(4.0 * c.parameter_count()) << " of FP32 gradients\n"
            << "step:      " << o.micro_batch << " sequences x " << o.accumulation
            << " micro-batches (global), split over N ranks; buckets of " << o.bucket_kib
            << " KiB (PyTorch's default is 25 MiB, which would hold this whole model)\n"
            << "backend:   " << o.backend
            << (o.backend == "mpi" ? " (" + std::to_string(world) + " processes)"
                                   : ", N = thread ranks, sgemm on one thread each")
            << "\n";
}

std::string list(const std::vector<int>& ranks) {
  std::string out;
  for (int n : ranks) out += (out.empty() ? "" : ", ") + std::to_string(n);
  return out;
}

// What the tour ran, next to the chapter's default run (the README's tables).
void print_tour_config(const StageOptions& o) {
  const StageOptions chapter_default;
  std::cout << "tour-config: 05 | ddp --tour: N = " << list(o.ranks) << " thread ranks, " << o.steps
            << " timed steps per rung (" << o.warmup
            << " warm-up), shortened analyses (the chapter's run, `ddp` without --tour: N = "
            << list(chapter_default.ranks) << ", " << chapter_default.steps << " timed steps, "
            << chapter_default.warmup << " warm-up)\n";
}

void print_ladder_tour(const std::vector<LadderRow>& rows, double hidden) {
  for (const LadderRow& r : rows)
    if (r.rung == Rung::kBuckets && r.ranks == 2)
      std::cout << "tour: 05 | gradient bytes sent per rank per step (N=2, buckets, 2 "
                   "micro-batches) | "
                << book::fixed(r.gradient_mib, 3) << " MiB = " << book::fixed(r.gradient_ratio, 3)
                << " x 2(N-1)/N x gradient x 2 | ring all-reduce sends 2(N-1)/N of the gradient\n";
  double deviation = 0;
  int n = 0;
  for (const LadderRow& r : rows)
    if (r.ranks > 1) deviation = std::max(deviation, r.loss_deviation), n = r.ranks;
  char text[32];
  std::snprintf(text, sizeof text, "%.1e", deviation);
  std::cout << "tour: 05 | loss vs chapter 4's one-device run, every rung at N=" << n
            << " | largest relative deviation " << text
            << " | data parallelism computes the same gradient\n";
  std::string counts;
  for (Rung rung : all_rungs())
    for (const LadderRow& r : rows)
      if (r.rung == rung && r.ranks == n)
        counts += (counts.empty() ? "" : " / ") + std::to_string(r.collectives);
  std::cout << "tour: 05 | collectives per step, per-tensor / flat / buckets / no-sync (2 "
               "micro-batches) | "
            << counts << " | buckets amortise latency; accumulation communicates once per step\n";
  std::cout << "tour: 05 | gradient traffic hidden behind backward (N=2, no-sync, trace) | "
            << book::fixed(100 * hidden, 0) << "% | overlap hides the all-reduce (on 2 CPU cores "
            << "it competes with backward for them)\n";
}

int body(int argc, char** argv) {
  const StageOptions options = parse_stage_options(argc, argv);
  if (options.backend == "mpi") {
    book::coll::MpiSession session(&argc, &argv);
    book::coll::MpiCommunicator world;
    if (world.rank() == 0) {
      book::print_machine_load();
      print_header(options, world.size());
    }
    if (options.cluster) {
      cluster_analysis(options, world);
      return 0;
    }
    const auto rows = run_ladder_mpi(options, world);
    if (world.rank() == 0) report_ladder(options, rows);
    return 0;
  }
  book::print_machine_load();
  if (options.tour) print_tour_config(options);
  print_header(options, 0);
  std::cout << "one device: chapter 4's Trainer, sgemm on every core: "
            << book::fixed(one_device_step_ms(options), 1) << " ms/step\n\n";
  const auto rows = run_ladder_threads(options);
  report_ladder(options, rows);
  if (!options.analysis) return 0;
  std::cout << "\n## Overlap, seen\n\n";
  trace_overlap(options, Rung::kFlat);
  const double hidden = trace_overlap(options, Rung::kNoSync);
  if (options.tour) print_ladder_tour(rows, hidden);
  scaling_analysis(options, rows);
  hierarchical_bytes(options);
  bottleneck_demo(options);
  uneven_work(options);
  stability_demo(options);
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return book::run_main(argc, argv, body); }
