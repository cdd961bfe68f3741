// "Surviving failures": a supervised run with seeded failures of every kind against an
// uninterrupted one (bit for bit), its timeline, uptime and goodput, and the checkpoint-interval
// sweep against Young's and Daly's model (stage_sweep.cc).
#include <cstring>
#include <fstream>
#include <iostream>

#include "chapters/15_production_training/stage.h"
#include "chapters/15_production_training/stage_failures.h"
#include "common/table.h"

namespace book::prod::stage {
namespace {

bool bit_identical(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// Steps against wall time: every execution (redone ones in red), each failure's down time shaded
// from the moment it struck to the next attempt's first step.
void plot_timeline(const SupervisedRun& run, const std::string& title) {
  const std::string stem = results_dir() + "/ch15_timeline";
  const std::string data = stem + ".dat", script = stem + ".gp", png = stem + ".png";
  {
    std::ofstream out(data);
    for (const StepExecution& e : run.executions)
      out << e.end_s << " " << e.step << " " << (e.redone ? 1 : 0) << "\n";
    std::ofstream gp(script);
    gp << "set terminal pngcairo size 900,500 font ',10'\nset output '" << png << "'\n"
       << "set title '" << title << "'\nset xlabel 'wall time, s'\nset ylabel 'optimizer step'\n"
       << "set grid\nset key bottom right box opaque\n";
    int i = 0;
    for (const FailureRecord& f : run.failures) {
      ++i;
      gp << "set object " << i << " rect from " << f.failed_s << ", graph 0 to " << f.resumed_s
         << ", graph 1 fc rgb '#fdd0d0' fs solid 0.8 noborder behind\n"
         << "set label " << i << " '" << f.cause.substr(0, f.cause.find(" (")) << "' at "
         << f.failed_s << ", graph " << 0.96 - 0.05 * ((i - 1) % 4)
         << " font ',8' tc rgb '#a00000'\n";
    }
    gp << "plot '" << data << "' using 1:($3 == 0 ? $2 : 1/0) with points pt 7 ps 0.6 "
       << "lc rgb '#1a9850' title 'step done', \\\n     '" << data
       << "' using 1:($3 == 1 ? $2 : 1/0) with points pt 7 ps 0.6 lc rgb '#d73027' "
       << "title 'step redone after a restart'\n";
  }
  std::cout << run_gnuplot(script, png, data) << "\n";
}

}  // namespace

std::vector<RunReport> run_failures_section(const StageOptions& options) {
  const FailuresOptions& o = options.failures;
  std::cout << "\n## Surviving failures\n\n" << describe(o) << "\n\n";
  const SupervisorOptions faulty = supervisor_options(o, results_dir() + "/ch15_checkpoints");
  SupervisorOptions clean = faulty;
  clean.faults.clear();
  clean.name = "uninterrupted N=" + std::to_string(o.ranks);
  const SupervisedRun reference = supervise(clean);
  const SupervisedRun run = supervise(faulty);
  print_failures(run, "ch15_failures");
  const bool same = bit_identical(reference.final_weights, run.final_weights);
  std::cout << "weights:   after step " << o.steps << ", "
            << (same ? "bit-identical to" : "DIFFERENT from") << " the uninterrupted run ("
            << run.final_weights.size() << " floats compared)\n"
            << "redone:    " << run.log.steps_redone << " step executions counted, "
            << run.predicted_redone << " planned by restart_plan\n";
  plot_timeline(run, faulty.name + ": steps against wall time, down time shaded");

  ReportOptions report;
  report.peak_gflops = ranks_peak_gflops(o.ranks);
  const RunReport a = summarize(reference.log, report), b = summarize(run.log, report);
  std::cout << "uptime:    " << fixed(100 * b.uptime, 1) << "% (down "
            << fixed(run.log.down_seconds, 2) << " s of " << fixed(run.log.wall_seconds, 2)
            << " s), goodput " << fixed(100 * b.goodput, 1)
            << "% (uninterrupted: " << fixed(100 * a.goodput, 1) << "%)\n";
  // Restarting smaller: ZeRO-1 on N ranks, a kill, the rest on N - 1 from the resharded checkpoint.
  if (o.ranks > 1 && o.every + 2 <= o.steps) {
    SupervisorOptions smaller = clean;
    smaller.zero = true;
    smaller.restart_ranks = o.ranks - 1;
    smaller.faults = {{FaultKind::kKill, o.every + 2, o.ranks - 1}};
    smaller.name = "ZeRO-1 N=" + std::to_string(o.ranks) + " -> " + std::to_string(o.ranks - 1);
    const SupervisedRun shrunk = supervise(smaller);
    const FailureRecord& f = shrunk.failures.at(0);
    std::cout << "smaller:   ZeRO-1 on " << o.ranks << " ranks, " << f.cause
              << "; resumed from the "
              << "checkpoint of step " << f.plan.resume_from << " on " << o.ranks - 1
              << " rank(s), its optimizer shards resharded (chapter 6), and finished step "
              << shrunk.log.steps.back().step << " with loss "
              << fixed(shrunk.log.steps.back().loss, 4) << " (uninterrupted " << o.ranks
              << "-rank DDP: " << fixed(reference.log.steps.back().loss, 4) << ")\n";
  }
  std::vector<RunLog> process_logs;
  if (o.process_steps > 0) process_logs = run_process_demo(o, options.tour);
  const SweepResult sweep = run_interval_sweep(o);
  if (options.tour) {
    std::cout << "tour-config: 15 | surviving failures --tour: " << describe(o)
              << "; sweep K = " << sweep.intervals << " on " << o.sweep_steps << " steps, "
              << o.sweep_repeats
              << " schedule(s) each (default: 60 steps, d_model 64, K = 2..32 on 96 "
              << "steps, 3 seeded schedules each)\n";
    std::cout << "tour: 15 | final weights after " << run.failures.size()
              << " injected failures (kill, hang, corrupt checkpoint, full disk) vs an "
                 "uninterrupted run | "
              << (same ? "bit-identical" : "DIFFERENT") << ", " << run.log.steps_redone
              << " steps redone = " << run.predicted_redone << " planned"
              << " | resume from the last good checkpoint: nothing lost, nothing done twice\n";
    std::cout << "tour: 15 | supervised run with " << run.failures.size()
              << " failures: uptime / goodput | " << fixed(100 * b.uptime, 1) << "% / "
              << fixed(100 * b.goodput, 1) << "% (uninterrupted goodput "
              << fixed(100 * a.goodput, 1)
              << "%) | failures cost down time and redone steps, both measured\n";
    std::cout << "tour: 15 | checkpoint interval with least lost work: measured vs Young's "
                 "sqrt(2 delta MTBF) | K = "
              << sweep.measured_best << " vs K* = " << fixed(sweep.young_steps, 1)
              << " steps (Daly " << fixed(sweep.daly_steps, 1)
              << ") | checkpoint too often and pay delta, too rarely and redo more\n";
  }
  std::vector<RunReport> reports = {a, b};
  for (const RunLog& log : process_logs) reports.push_back(summarize(log, report));
  std::cout << "\n### The supervised runs, reported\n\n";
  print_reports(reports, "ch15_failures_report");
  return reports;
}

}  // namespace book::prod::stage
