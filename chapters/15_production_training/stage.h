/// @file
/// The `production` stage in named steps (production.cc calls them in order): the A/B experiment
/// that proves an optimisation (section "The experiment"), the supervisor that survives failures
/// (section "Surviving failures"), and the report a lead wants for every run (section "The
/// report"). Each section prints its tables, writes results/ch15_*.csv/json and pictures, and with
/// --tour its tour lines.
#pragma once

#include <string>
#include <vector>

#include "chapters/15_production_training/experiment.h"
#include "chapters/15_production_training/failures_options.h"
#include "chapters/15_production_training/report.h"
#include "common/flags.h"

namespace book::prod::stage {

/// The stage's command line: one part per section.
struct StageOptions {
  bool tour = false;             ///< the tour's short run (fewer steps, fewer repetitions)
  ExperimentOptions experiment;  ///< section "The experiment" (experiment.h)
  FailuresOptions failures;      ///< section "Surviving failures" (flags --sup-*)
};

/// Parses the command line; `--tour` shortens what it does not set. Throws book::UsageError for a
/// bad command line (book::HelpRequested for --help).
StageOptions parse_stage_options(int argc, const char* const* argv);

/// The FP32 peak that `ranks` ranks reach together, GFLOP/s: chapter 1's FMA measurement on
/// `ranks` threads at once (ranks that share a core share its peak). The MFU denominator.
double ranks_peak_gflops(int ranks);

/// What "The experiment" hands to the report: every judged arm's log and report.
struct ExperimentSection {
  std::vector<RunLog> logs;        ///< each pair's baseline and candidate, in order
  std::vector<RunReport> reports;  ///< summarize() of each
};

/// "The experiment": each baseline/candidate pair judged in order (the loss at fixed steps and
/// compare_losses' verdict, then tokens/s of interleaved repetitions, then the bottleneck of
/// both), time-to-converge, the broken candidates rejected; results/ch15_experiment.csv/json and
/// results/ch15_loss_curves.png; with --tour its tour lines.
ExperimentSection run_experiment_section(const StageOptions& options);

/// "Surviving failures": the supervised run with seeded failures of every kind (kill, hang,
/// corrupt checkpoint, full disk) next to an uninterrupted one (bit for bit), its failures table,
/// its timeline (results/ch15_timeline.png), uptime and goodput, and the checkpoint-interval sweep
/// against Young's and Daly's model; then their reports side by side (results/ch15_failures_report
/// .csv/json). Returns the uninterrupted and the supervised runs' reports.
std::vector<RunReport> run_failures_section(const StageOptions& options);

/// "The report": every run of the stage side by side in the four layers (business:
/// time-to-converge; throughput: tokens/s and per rank; system: MFU/HFU; stability: restarts,
/// uptime, goodput), printed and written to results/ch15_report.csv/json.
void report_section(const StageOptions& options, const std::vector<RunReport>& runs);

/// "Throughput against P99": chapter 11's trade-off on its simulated clock (p99.h) as one table
/// (config, capacity and served tokens/s, TPOT P99, SLO attained), written to
/// results/ch15_p99.csv/json, and with --tour its tour line. Serving, not training: no RunLog.
void p99_section(const StageOptions& options);

}  // namespace book::prod::stage
