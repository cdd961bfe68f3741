// bazel run -c opt //chapters/13_disaggregation_speculation/pd:pd [-- --tour] (--help lists all)
// mpirun -np 2 bazel-bin/chapters/13_disaggregation_speculation/pd/pd --backend mpi
//
// Prefill/decode disaggregation measured twice: the real chapter-11 engines split over chapter
// 3's thread ranks on this machine's wall clock, and chapter 11's simulated clock at 7B scale
// with the KV transfer priced on three links, over arrival rates and prompt lengths.
#include <iostream>

#include "chapters/13_disaggregation_speculation/pd/pd_stage.h"
#include "common/flags.h"
#include "common/machine_load.h"
#include "common/main.h"
#include "common/table.h"

namespace {

using namespace book;
using namespace book::pd::stage;

int body(int argc, char** argv) {
  StageOptions o;
  Flags flags("pd", "prefill/decode disaggregation: wall clock and 7B simulated sweep");
  flags.add("tour", &o.tour, "the short run the tour prints (under 20 s)");
  flags.add("wall-requests", &o.wall_requests, "requests per wall-clock run").range(1, 10000);
  flags.add("wall-rates", &o.wall_rates, "wall-clock arrival rates, requests/s").range(0.01, 1e4);
  flags.add("wall-slo-ttft-ms", &o.wall_slo_ttft_ms, "wall-clock TTFT SLO").range(0.001, 1e7);
  flags.add("wall-slo-tpot-ms", &o.wall_slo_tpot_ms, "wall-clock TPOT SLO").range(0.001, 1e7);
  flags.add("sim-requests", &o.sim_requests, "requests per simulated cell").range(1, 100000);
  flags.add("sim-prompts", &o.sim_prompts, "prompt lengths of the sweep").range(1, 3800);
  flags.add("sim-rates", &o.sim_rates, "arrival rates of the sweep, requests/s").range(0.01, 1e4);
  flags.add("sim-slo-ttft-ms", &o.sim_slo_ttft_ms, "simulated TTFT SLO").range(0.001, 1e7);
  flags.add("sim-slo-tpot-ms", &o.sim_slo_tpot_ms, "simulated TPOT SLO").range(0.001, 1e7);
  flags.add("seed", &o.seed, "the workloads' seed");
  flags.add("backend", &o.backend, "the split's ranks: threads, or mpi (run under mpirun)")
      .choices({"threads", "mpi"});
  flags.add("prefill", &o.prefill, "with --backend mpi: prefill ranks (the rest decode)")
      .range(1, 64);
  flags.parse(argc, argv);
  if (o.tour) {
    o.wall_requests = 24;
    o.wall_rates = {90};
    o.sim_requests = 120;
    o.sim_prompts = {128, 2048};
    o.sim_rates = {2, 8, 16, 32};
  }
  if (o.backend == "mpi") {  // the wall clock only: the simulated sweep is one process's work
    run_mpi_wall_clock(o, &argc, &argv);
    return 0;
  }
  const std::string dir = results_dir();
  print_machine_load();
  if (o.tour)
    std::cout << "tour-config: 13 | pd --tour: wall clock " << o.wall_requests
              << " requests at 90/s (the chapter's run: 64 at 30 and 90/s); sim " << o.sim_requests
              << " requests per cell, prompts 128 and 2048, 4 rates (the chapter's: 300, 3 "
                 "prompts, 9 rates)\n";
  std::cout << "# Chapter 13, section 2: prefill/decode disaggregation\n";
  run_wall_clock(o, dir);
  run_sweep(o, dir);
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return book::run_main(argc, argv, body); }
