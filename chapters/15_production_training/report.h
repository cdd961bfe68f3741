/// @file
/// The report a lead wants from a training run, in four layers (business, throughput, system,
/// stability): time-to-converge; tokens/s in total and per rank ("per GPU"); MFU and HFU; restarts,
/// uptime and goodput; and the loss at fixed steps, which is how two runs are compared.
///
/// Every run in the chapter (the A/B experiment's baseline and candidate, the supervised run with
/// its failures) writes one RunLog as it goes; summarize() turns a log into the numbers, so each
/// number has one definition in the book.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/table.h"

namespace book::prod {

/// One optimizer step that counts toward the run (a step redone after a restart appears once:
/// its last, useful execution).
struct StepRecord {
  std::int64_t step = 0;    ///< 1-based optimizer step
  double loss = 0;          ///< its training loss (mean over every rank's sequences)
  double seconds = 0;       ///< the step's wall time (slowest rank)
  std::int64_t tokens = 0;  ///< positions trained in the step, all ranks together
  double since_start = 0;   ///< seconds from the job's start to the step's end (restarts included)
};

/// A validation loss measured during the run.
struct EvalRecord {
  std::int64_t step = 0;   ///< after this many steps
  double since_start = 0;  ///< seconds from the job's start (restarts included)
  double loss = 0;         ///< mean validation loss
};

/// What a run records as it goes.
struct RunLog {
  std::string name;                  ///< what ran, e.g. "DDP N=2 FP32"
  int ranks = 1;                     ///< data-parallel ranks ("GPUs")
  double model_flops_per_token = 0;  ///< forward + backward FLOPs the model needs (6N + 12·L·C·T)
  double hardware_flops_per_token = 0;  ///< FLOPs actually executed (recomputation included);
                                        ///< 0 means "equal to the model's"
  std::vector<StepRecord> steps;        ///< the useful steps, in step order
  std::vector<EvalRecord> evals;        ///< validation losses, in step order
  double wall_seconds = 0;              ///< the whole job: steps, evaluation, checkpoints, restarts
  double down_seconds =
      0;             ///< time with no rank training: detecting a failure, restarting, loading
  int restarts = 0;  ///< times the job was started again after a failure
  std::int64_t steps_redone = 0;  ///< step executions thrown away by failures
};

/// How to judge a log.
struct ReportOptions {
  double target_loss = 0;  ///< time-to-converge: first validation loss ≤ this (0: not measured)
  std::vector<std::int64_t> loss_at;  ///< steps whose training loss the report shows
  double peak_gflops = 0;  ///< the sum of the ranks' measured FP32 peaks (chapter 1), GFLOP/s
};

/// The numbers, one definition each.
struct RunReport {
  std::string name;        ///< RunLog::name
  int ranks = 1;           ///< RunLog::ranks
  std::int64_t steps = 0;  ///< useful steps
  /// Steps to the first validation loss ≤ target (−1: never reached, or no target).
  std::int64_t converge_steps = -1;
  double converge_seconds = -1;      ///< wall seconds to that evaluation (−1: never)
  double tokens_per_s = 0;           ///< useful tokens over the useful steps' time
  double tokens_per_s_per_rank = 0;  ///< tokens_per_s / ranks: "tokens/s/GPU"
  double mfu = 0;    ///< model FLOPs/s ÷ peak: tokens/s × model FLOPs per token ÷ peak_gflops
  double hfu = 0;    ///< the same with the FLOPs executed (recomputation counts): HFU ≥ MFU
  int restarts = 0;  ///< RunLog::restarts
  std::int64_t steps_redone = 0;  ///< RunLog::steps_redone
  double uptime = 1;              ///< share of wall time some rank was training or ready
  double goodput = 1;  ///< share of wall time spent in useful steps (redone steps, evaluation,
                       ///< checkpoints and downtime are not)
  std::vector<std::pair<std::int64_t, double>> loss_at;  ///< (step, training loss) asked for
};

/// The report of one log. Throws book::Error for a log that cannot be judged: no steps, steps
/// out of order, a negative time, more ranks than 1 with no peak, a step named in loss_at that
/// the log does not have.
RunReport summarize(const RunLog& log, const ReportOptions& options);

/// The runs side by side: one row per run, the four layers as columns, then one column per step
/// any run reports the loss at (in step order; "-" for a run that did not reach or ask for it).
/// Throws book::Error for no runs.
Table report_table(const std::vector<RunReport>& reports);

/// report_table printed as Markdown and written to `<results>/<stem>.csv` and `.json`.
void print_reports(const std::vector<RunReport>& reports, const std::string& stem);

}  // namespace book::prod
