// The ddp stage's overlap picture: a Chrome trace of a few steps on 2 thread ranks, and a gnuplot
// drawing of its compute and communication lanes.
#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>

#include "chapters/01_gemm_cpu/sgemm.h"
#include "chapters/03_collectives/threads.h"
#include "chapters/05_data_parallel/ddp_trainer.h"
#include "chapters/05_data_parallel/stage.h"
#include "common/table.h"
#include "common/trace.h"

namespace book::ddp::stage {
namespace {

// The boxes the picture shows, in the order of its legend.
const std::vector<std::string> kCategories = {"forward", "backward",   "wait", "optimizer",
                                              "data",    "collective", "delay"};

// rank·2 + 0 for the compute lane, rank·2 + 1 for comm; -1 for boxes the picture leaves out.
int row_of(const Trace::Event& e) {
  if (e.lane == "compute") return 2 * e.rank;
  if (e.lane == "comm" && (e.category == "collective" || e.category == "delay"))
    return 2 * e.rank + 1;
  return -1;
}

void draw(const std::string& table, const std::string& svg, const std::string& title) {
  // One row per rank and lane; boxes coloured by category (index in kCategories).
  const std::string script =
      "set terminal svg size 960,300 font 'sans,11' background rgb 'white'; set output '" + svg +
      "'; set title '" + title +
      "' noenhanced; set xlabel 'time (ms)'; set yrange [3.6:-0.6]; set ytics ('rank 0 compute' 0, "
      "'rank 0 comm' 1, 'rank 1 compute' 2, 'rank 1 comm' 3); set key below horizontal noenhanced; "
      "set style fill solid 0.9 border rgb 'white'; set grid xtics; "
      "c(k)=word('#4878b0 #2f9e44 #d9480f #868e96 #f59f00 #7048e8 #c92a2a', k+1); "
      "plot for [k=0:6] '" +
      table +
      "' using "
      "((column(3)+column(4))/2):((column(5)==k)?column(1):1/0):((column(4)-column(3))/2):(0.38) "
      "with boxxyerror lc rgb c(k) "
      "title word('forward backward wait-for-gradients optimizer data all-reduce link-delay', k+1)";
  const std::string command = "gnuplot -e \"" + script + "\" 2>/dev/null";
  if (std::system(command.c_str()) == 0)
    std::cout << "picture:   " << svg << "\n";
  else
    std::cout << "picture:   skipped (gnuplot not found; apt-get install gnuplot-nox)\n";
}

}  // namespace

double trace_overlap(const StageOptions& options, Rung rung) {
  Trace trace;
  coll::ThreadsOptions threads;
  threads.trace = &trace;
  const gemm::SgemmThreads one_thread(1);
  std::vector<double> hidden(2, 0), busy(2, 0), wait(2, 0);
  const int steps = 3;
  coll::run_ranks(
      2,
      [&](coll::Communicator& comm) {
        DdpTrainer trainer(comm, run_options(options, rung));
        for (int s = 0; s < steps; ++s) {
          trainer.step();
          busy[comm.rank()] += trainer.last_times().comm_busy;
          wait[comm.rank()] += trainer.last_times().comm_wait;
        }
      },
      threads);
  const std::string base = options.trace_file.empty()
                               ? results_dir() + "/ch05_trace_" + rung_name(rung) + ".json"
                               : options.trace_file + "." + rung_name(rung) + ".json";
  trace.write_json(base);
  // The drawing's table: row, category index, start and end in ms, from the first step's start.
  const auto events = trace.events();
  double origin = 1e300;
  for (const auto& e : events)
    if (e.lane == "compute") origin = std::min(origin, e.start_us);
  const std::string table = base + ".tsv";
  std::ofstream out(table);
  for (const auto& e : events) {
    const int row = row_of(e);
    const auto category = std::find(kCategories.begin(), kCategories.end(), e.category);
    if (row < 0 || category == kCategories.end()) continue;
    out << row << " " << e.rank << " " << (e.start_us - origin) / 1e3 << " "
        << (e.start_us + e.duration_us - origin) / 1e3 << " " << category - kCategories.begin()
        << "\n";
  }
  out.close();
  double hidden_share = 0;
  for (int r = 0; r < 2; ++r)
    hidden_share += busy[r] > 0 ? std::clamp(1 - wait[r] / busy[r], 0.0, 1.0) : 0;
  hidden_share /= 2;
  std::cout << "trace:     " << base << " (open in https://ui.perfetto.dev; rung "
            << rung_name(rung) << ", N=2, " << steps
            << " steps; communication hidden: " << fixed(100 * hidden_share, 0) << "%)\n";
  draw(table, base.substr(0, base.size() - 5) + ".svg",
       std::string("rung ") + rung_name(rung) + ", 2 thread ranks, " + std::to_string(steps) +
           " steps of " + std::to_string(options.accumulation) + " micro-batches");
  return hidden_share;
}

}  // namespace book::ddp::stage
