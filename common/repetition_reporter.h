/// @file
/// A Google Benchmark reporter that keeps every repetition's time, so a bench can print, after the
/// usual console output, the medians, spreads and ratios of its own table (the book reports
/// medians of interleaved repetitions, common/bench_args.h).
#pragma once

#include <benchmark/benchmark.h>

#include <map>
#include <string>
#include <vector>

namespace book {

/// The console reporter, plus each benchmark's repetition times (real time, in the benchmark's
/// unit), keyed by its full name ("BM_AllReduce/bytes:4/ranks:2/check:0/manual_time"). With
/// random interleaving each repetition arrives in a call of its own; they are collected across
/// calls. Failed runs and the aggregates (mean, median, ...) are not kept.
class RepetitionReporter : public benchmark::ConsoleReporter {
 public:
  /// Keeps the iterations' times, then prints as the console reporter does.
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs)
      if (run.run_type == Run::RT_Iteration && !run.error_occurred)
        times[run.benchmark_name()].push_back(run.GetAdjustedRealTime());
    ConsoleReporter::ReportRuns(runs);
  }
  /// Each benchmark's repetition times, by full name.
  std::map<std::string, std::vector<double>> times;
};

}  // namespace book
