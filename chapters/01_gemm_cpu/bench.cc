// Google Benchmark: every rung and the two peers (OpenBLAS through cblas, BLIS through its native
// API) on the same square problems, GFLOP/s as a counter, then each rung as a ratio to OpenBLAS.
//
//   bazel run -c opt //chapters/01_gemm_cpu:bench
//   bazel run -c opt //chapters/01_gemm_cpu:bench -- --benchmark_filter='07|OpenBLAS'
#include <benchmark/benchmark.h>

#include <algorithm>
#include <functional>
#include <iostream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "chapters/01_gemm_cpu/blis_peer.h"
#include "chapters/01_gemm_cpu/dispatch.h"
#include "chapters/01_gemm_cpu/openblas_peer.h"
#include "common/benchmark_flags.h"
#include "common/buffer.h"
#include "common/check.h"
#include "common/main.h"
#include "common/rng.h"
#include "common/table.h"
#include "common/timer.h"

namespace book::gemm {
namespace {

using MatmulFn = void (*)(int, int, int, const float*, int, const float*, int, float*, int);

// Square n×n×n problem with fresh random operands, timed in wall-clock (real) time: the threaded
// rungs and peers do their work on other threads.
void run_square(benchmark::State& state,
                const std::function<void(int, const float*, const float*, float*)>& call) {
  const int n = static_cast<int>(state.range(0));
  Rng rng(n);
  AlignedBuffer<float> a(static_cast<std::size_t>(n) * n), b(a.size()), c(a.size());
  fill_uniform<float>(a.span(), rng);
  fill_uniform<float>(b.span(), rng);
  try {
    call(n, a.data(), b.data(), c.data());  // warm-up, and the stub check
  } catch (const NotImplemented& not_started) {
    state.SkipWithError(not_started.what());
    return;
  }
  for (auto _ : state) {
    call(n, a.data(), b.data(), c.data());
    benchmark::DoNotOptimize(c.data());
    benchmark::ClobberMemory();
  }
  // Printed with an SI prefix, e.g. "FLOP/s=56.7G/s".
  state.counters["FLOP/s"] =
      benchmark::Counter(2.0 * n * n * n, benchmark::Counter::kIsIterationInvariantRate);
}

// Prints, after the usual console output, each benchmark's GFLOP/s as a ratio to OpenBLAS on one
// thread and on all threads at the same n.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  // One result per benchmark: with --benchmark_repetitions, the median of the repetitions.
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    std::vector<double> repetitions;
    double reported_median = -1;
    std::string name;
    for (const Run& run : runs) {
      const auto it = run.counters.find("FLOP/s");
      if (run.error_occurred || it == run.counters.end()) continue;
      name = run.run_name.function_name;  // without the "/real_time" or "_median" suffixes
      if (run.run_type == Run::RT_Iteration) repetitions.push_back(it->second.value * 1e-9);
      if (run.run_type == Run::RT_Aggregate && run.aggregate_name == "median")
        reported_median = it->second.value * 1e-9;
    }
    if (name.empty()) return;
    const double gflops = reported_median >= 0 ? reported_median : median(repetitions);
    const int n = std::stoi(runs.front().run_name.args);  // args: "n"
    // With repetitions this is called twice (the runs, then the aggregates): the median wins.
    for (Result& r : results_)
      if (r.name == name && r.n == n) {
        if (reported_median >= 0) r.gflops = gflops;
        return;
      }
    results_.push_back({name, n, gflops});
  }
  void Finalize() override {
    ConsoleReporter::Finalize();
    std::map<std::pair<std::string, int>, double> by;
    for (const auto& r : results_) by[{r.name, r.n}] = r.gflops;
    Table table({"benchmark", "n", "GFLOP/s", "x OpenBLAS 1 thread", "x OpenBLAS all threads"});
    for (const auto& r : results_) {
      const double one = by[{"OpenBLAS 1 thread", r.n}], all = by[{"OpenBLAS all threads", r.n}];
      table.add_row({r.name, std::to_string(r.n), fixed(r.gflops, 2),
                     one > 0 ? fixed(r.gflops / one, 3) : "-",
                     all > 0 ? fixed(r.gflops / all, 3) : "-"});
    }
    std::cout << "\n" << table.markdown();
  }

 private:
  struct Result {
    std::string name;
    int n;
    double gflops;
  };
  std::vector<Result> results_;
};

void register_all() {
  const int all = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const std::vector<int> sizes{256, 512, 1024, 2048};
  auto add = [&](const std::string& name, auto call, int max_n) {
    for (int n : sizes)
      if (n <= max_n)
        benchmark::RegisterBenchmark(name.c_str(),
                                     [call](benchmark::State& state) { run_square(state, call); })
            ->Arg(n)
            ->UseRealTime()
            ->Unit(benchmark::kMillisecond);
  };
  for (int threads : {1, all}) {
    add(
        threads == 1 ? "OpenBLAS 1 thread" : "OpenBLAS all threads",
        [threads](int n, const float* a, const float* b, float* c) {
          openblas_set_threads(threads);
          openblas_matmul(n, n, n, a, n, b, n, c, n);
        },
        1 << 30);
  }
  for (Rung rung : all_rungs()) {
    // Rungs 1-3 take seconds per call at n = 1024 and minutes at 2048.
    const int max_n = rung == Rung::kNaive ? 512 : rung <= Rung::kBlocked ? 1024 : 1 << 30;
    add(
        rung_name(rung),
        [rung](int n, const float* a, const float* b, float* c) {
          matmul(rung, n, n, n, a, n, b, n, c, n);
        },
        max_n);
  }
  // BLIS last: its OpenMP threads keep spinning for a while after each call and would steal the
  // core from whatever runs next.
  for (int threads : {1, all}) {
    add(
        threads == 1 ? "BLIS 1 thread" : "BLIS all threads",
        [threads](int n, const float* a, const float* b, float* c) {
          blis_set_threads(threads);
          blis_matmul(n, n, n, a, n, b, n, c, n);
        },
        1 << 30);
  }
}

}  // namespace
}  // namespace book::gemm

int bench_main(int argc, char** argv) {
  book::init_benchmark(&argc, argv);
  std::cout << "OpenBLAS core: " << book::gemm::openblas_core_name() << "; cblas_sgemm from "
            << book::gemm::openblas_cblas_library() << "\n";
  book::gemm::register_all();
  book::gemm::RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}

int main(int argc, char** argv) { return book::run_main(argc, argv, bench_main); }
