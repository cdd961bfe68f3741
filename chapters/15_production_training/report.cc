// The report's numbers (report.h): each defined once, here.
#include "chapters/15_production_training/report.h"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <set>
#include <string>

#include "common/check.h"
#include "common/table.h"

namespace book::prod {

namespace {

void check_log(const RunLog& log, const ReportOptions& options) {
  BOOK_CHECK(!log.steps.empty(), "run '" + log.name + "' has no steps: nothing to report");
  BOOK_CHECK(log.ranks >= 1, "run '" + log.name + "' has " + std::to_string(log.ranks) +
                                 " ranks; a run has at least one");
  BOOK_CHECK(std::isfinite(log.wall_seconds) && log.wall_seconds > 0,
             "run '" + log.name + "' has wall time " + std::to_string(log.wall_seconds) +
                 " s; give the job's measured wall time (> 0)");
  BOOK_CHECK(log.down_seconds >= 0 && log.down_seconds <= log.wall_seconds,
             "run '" + log.name + "': down time " + std::to_string(log.down_seconds) +
                 " s is not within the wall time");
  std::int64_t previous = 0;
  for (const StepRecord& s : log.steps) {
    BOOK_CHECK(s.step > previous, "run '" + log.name + "': step " + std::to_string(s.step) +
                                      " comes after step " + std::to_string(previous) +
                                      "; record the useful steps once each, in order");
    BOOK_CHECK(std::isfinite(s.seconds) && s.seconds >= 0 && s.tokens >= 0,
               "run '" + log.name + "': step " + std::to_string(s.step) +
                   " has a negative or non-finite time or token count");
    previous = s.step;
  }
  BOOK_CHECK(options.peak_gflops > 0 || log.model_flops_per_token == 0,
             "run '" + log.name + "': MFU needs the ranks' measured peak (peak_gflops > 0)");
}

}  // namespace

RunReport summarize(const RunLog& log, const ReportOptions& options) {
  check_log(log, options);
  RunReport r;
  r.name = log.name;
  r.ranks = log.ranks;
  r.steps = static_cast<std::int64_t>(log.steps.size());
  r.restarts = log.restarts;
  r.steps_redone = log.steps_redone;

  double step_seconds = 0;
  double tokens = 0;
  for (const StepRecord& s : log.steps) step_seconds += s.seconds, tokens += double(s.tokens);
  r.tokens_per_s = step_seconds > 0 ? tokens / step_seconds : 0;
  r.tokens_per_s_per_rank = r.tokens_per_s / log.ranks;
  if (options.peak_gflops > 0) {
    const double hardware =
        log.hardware_flops_per_token > 0 ? log.hardware_flops_per_token : log.model_flops_per_token;
    r.mfu = r.tokens_per_s * log.model_flops_per_token / (options.peak_gflops * 1e9);
    r.hfu = r.tokens_per_s * hardware / (options.peak_gflops * 1e9);
  }
  r.uptime = 1 - log.down_seconds / log.wall_seconds;
  r.goodput = std::min(1.0, step_seconds / log.wall_seconds);

  if (options.target_loss > 0)
    for (const EvalRecord& e : log.evals)
      if (e.loss <= options.target_loss) {
        r.converge_steps = e.step;
        r.converge_seconds = e.since_start;
        break;
      }
  for (std::int64_t step : options.loss_at) {
    const StepRecord* found = nullptr;
    for (const StepRecord& s : log.steps)
      if (s.step == step) found = &s;
    BOOK_CHECK(found != nullptr, "run '" + log.name + "' has no step " + std::to_string(step) +
                                     " (it ran " + std::to_string(log.steps.back().step) +
                                     "); ask for the loss at a step the run reached");
    r.loss_at.emplace_back(step, found->loss);
  }
  return r;
}

Table report_table(const std::vector<RunReport>& reports) {
  BOOK_CHECK(!reports.empty(), "report_table: no runs to report");
  std::set<std::int64_t> steps;  // every step some run reports the loss at, in order
  for (const RunReport& r : reports)
    for (const auto& [step, loss] : r.loss_at) steps.insert(step);
  std::vector<std::string> columns = {
      "run", "ranks", "steps",    "converge steps", "converge s", "tokens/s", "tokens/s/rank",
      "MFU", "HFU",   "restarts", "steps redone",   "uptime",     "goodput"};
  for (std::int64_t step : steps) columns.push_back("loss @" + std::to_string(step));
  Table table(columns);
  for (const RunReport& r : reports) {
    std::vector<std::string> row = {
        r.name,
        std::to_string(r.ranks),
        std::to_string(r.steps),
        r.converge_steps < 0 ? "never" : std::to_string(r.converge_steps),
        r.converge_seconds < 0 ? "never" : fixed(r.converge_seconds, 1),
        fixed(r.tokens_per_s, 0),
        fixed(r.tokens_per_s_per_rank, 0),
        fixed(100 * r.mfu, 1) + "%",
        fixed(100 * r.hfu, 1) + "%",
        std::to_string(r.restarts),
        std::to_string(r.steps_redone),
        fixed(100 * r.uptime, 1) + "%",
        fixed(100 * r.goodput, 1) + "%"};
    for (std::int64_t step : steps) {
      std::string cell = "-";
      for (const auto& [at, loss] : r.loss_at)
        if (at == step) cell = fixed(loss, 4);
      row.push_back(cell);
    }
    table.add_row(row);
  }
  return table;
}

void print_reports(const std::vector<RunReport>& reports, const std::string& stem) {
  const Table table = report_table(reports);
  std::cout << table.markdown() << "\n";
  const std::string dir = results_dir();
  table.write_csv(dir + "/" + stem + ".csv");
  table.write_json(dir + "/" + stem + ".json");
}

}  // namespace book::prod
