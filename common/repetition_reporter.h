/// @file
/// A Google Benchmark reporter that keeps every repetition's time, so a bench can print, after the
/// usual console output, the medians, spreads and ratios of its own table (the book reports
/// medians of interleaved repetitions, common/bench_args.h).
#pragma once

#include <benchmark/benchmark.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/table.h"
#include "common/timer.h"

namespace book {

/// The console reporter, plus each benchmark's repetition times (real time, in the benchmark's
/// unit), keyed by its full name ("BM_AllReduce/bytes:4/ranks:2/check:0/manual_time"). With
/// random interleaving each repetition arrives in a call of its own; they are collected across
/// calls. Failed runs are not kept. Every standard flag works: where only Google Benchmark's
/// aggregates arrive (--benchmark_report_aggregates_only, --benchmark_display_aggregates_only),
/// the reported median stands in for the repetitions, and its spread is unknown.
class RepetitionReporter : public benchmark::ConsoleReporter {
 public:
  /// Keeps the iterations' times (or the aggregate median), then prints as the console reporter
  /// does.
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      if (run.error_occurred) continue;
      const std::string name = run.run_name.str();
      if (run.run_type == Run::RT_Iteration) {
        if (only_median.erase(name)) times[name].clear();
        times[name].push_back(run.GetAdjustedRealTime());
      } else if (run.aggregate_name == "median" && !times.count(name)) {
        times[name] = {run.GetAdjustedRealTime()};
        only_median.insert(name);
      }
    }
    ConsoleReporter::ReportRuns(runs);
  }

  /// The median time of benchmark `name` and the spread of its repetitions ((slowest − fastest) /
  /// median; -1 when unknown: one repetition, or only the aggregates arrived). False when `name`
  /// did not run (filtered out, or failed).
  bool summary(const std::string& name, double* median_time, double* spread) const {
    const auto it = times.find(name);
    if (it == times.end() || it->second.empty()) return false;
    *median_time = median(it->second);
    *spread = it->second.size() < 2 || only_median.count(name) ? -1 : relative_spread(it->second);
    return true;
  }

  /// Each benchmark's repetition times, by full name (one entry, the median, where only the
  /// aggregates arrived).
  std::map<std::string, std::vector<double>> times;
  /// The names whose entry in `times` is Google Benchmark's median, not repetitions.
  std::set<std::string> only_median;
};

/// "12.3%" for a spread from RepetitionReporter::summary, "-" when it is unknown.
inline std::string spread_text(double spread) {
  return spread < 0 ? "-" : fixed(100 * spread, 1) + "%";
}

}  // namespace book
