// bazel run -c opt //chapters/15_production_training:supervise -- [trainer flags] [--hours H]
//
// The supervisor on its own (the role of torchrun's elastic agent), for a reader's long run: it
// trains the model the flags describe on thread ranks, checkpoints every --every steps, injects
// the seeded --faults, restarts from the last good checkpoint after each failure, prints a
// progress line every --progress-s seconds, and ends with the chapter's report (uptime, goodput,
// restarts, steps redone). Soak mode, --hours H: run until H hours have passed, at the first
// checkpoint after (the seeded faults are then drawn from the first --steps steps).
#include <iostream>

#include "chapters/01_gemm_cpu/peak.h"
#include "chapters/15_production_training/failures_options.h"
#include "chapters/15_production_training/report.h"
#include "common/flags.h"
#include "common/machine_load.h"
#include "common/main.h"
#include "common/table.h"

namespace {

using namespace book;
using namespace book::prod;

int body(int argc, char** argv) {
  FailuresOptions o;
  o.faults = 0;
  Flags flags("supervise", "the supervisor on its own: train, checkpoint, inject faults, restart");
  add_failures_flags(flags, &o, "");
  flags.add("hours", &o.hours, "soak mode: run this many hours (0: --steps steps)")
      .range(0.0, 10000.0);
  flags.add("progress-s", &o.progress_s, "a progress line at most this often, seconds")
      .range(0.1, 86400.0);
  flags.parse(argc, argv);
  print_machine_load();
  SupervisorOptions s = supervisor_options(o, results_dir() + "/ch15_supervise");
  s.name = "supervise N=" + std::to_string(o.ranks);
  if (o.hours > 0) {
    s.steps = std::int64_t{1} << 40;  // the clock ends the run, at a checkpoint
    s.stop_after_s = o.hours * 3600;
    s.ddp.train.total_steps = s.steps;  // a learning-rate schedule as long as any soak
  }
  s.progress = [](const std::string& line) { std::cout << line << std::endl; };
  s.progress_every_s = o.progress_s;
  std::cout << "supervise: " << describe(o)
            << (o.hours > 0 ? ", soak for " + fixed(o.hours * 3600, 0) + " s" : std::string())
            << "\n";
  const SupervisedRun run = supervise(s);
  print_failures(run, "ch15_supervise_failures");
  ReportOptions report;
  report.peak_gflops = gemm::measure_fp32_peak_gflops(o.ranks);
  print_reports({summarize(run.log, report)}, "ch15_supervise");
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return book::run_main(argc, argv, body); }
