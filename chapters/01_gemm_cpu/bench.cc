// Google Benchmark: every rung and the two peers (OpenBLAS through cblas, BLIS through its native
// API) on the same square problems, GFLOP/s as a counter, then each rung as a ratio to OpenBLAS.
//
//   bazel run -c opt //chapters/01_gemm_cpu:bench
//   bazel run -c opt //chapters/01_gemm_cpu:bench -- --benchmark_filter='07|OpenBLAS'
// Every benchmark runs 5 times in a random interleaved order (common/bench_args.h); the tables
// show the medians.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <functional>
#include <iostream>
#include <map>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "chapters/01_gemm_cpu/blis_peer.h"
#include "chapters/01_gemm_cpu/dispatch.h"
#include "chapters/01_gemm_cpu/openblas_peer.h"
#include "common/bench_args.h"
#include "common/benchmark_flags.h"
#include "common/buffer.h"
#include "common/check.h"
#include "common/main.h"
#include "common/peers.h"
#include "common/repetition_reporter.h"
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
  // Printed with an SI prefix, e.g. "FLOP/s=56.7G/s"; the ratio table uses the times.
  state.counters["FLOP/s"] =
      benchmark::Counter(2.0 * n * n * n, benchmark::Counter::kIsIterationInvariantRate);
}

// Prints, after the usual console output, each benchmark's GFLOP/s (from its median time) as a
// ratio to OpenBLAS on one thread and on all threads at the same n. Every standard Google
// Benchmark flag works (RepetitionReporter falls back to the reported median when only the
// aggregates arrive).
class RatioReporter : public RepetitionReporter {
 public:
  void Finalize() override {
    RepetitionReporter::Finalize();
    struct Result {
      std::string name;
      int n;
      double gflops, spread;
    };
    std::vector<Result> results;
    std::map<std::pair<std::string, int>, double> by;
    for (const auto& [full_name, unused] : times) {
      // "07 avx2/1024/real_time" -> name "07 avx2", n 1024.
      const auto slash = full_name.find('/');
      const std::string name = full_name.substr(0, slash);
      const int n = std::stoi(full_name.substr(slash + 1));
      double ms = 0, spread = 0;
      if (!summary(full_name, &ms, &spread)) continue;
      const double gflops = 2.0 * n * n * n / (ms * 1e-3) * 1e-9;
      results.push_back({name, n, gflops, spread});
      by[{name, n}] = gflops;
    }
    // Random interleaving reports in a random order: the table goes by size, then by name.
    std::sort(results.begin(), results.end(), [](const Result& x, const Result& y) {
      return std::tie(x.n, x.name) < std::tie(y.n, y.name);
    });
    Table table({"benchmark", "n", "GFLOP/s (median)", "spread", "x OpenBLAS 1 thread",
                 "x OpenBLAS all threads"});
    for (const Result& r : results) {
      const double one = by[{"OpenBLAS 1 thread", r.n}], all = by[{"OpenBLAS all threads", r.n}];
      table.add_row({r.name, std::to_string(r.n), fixed(r.gflops, 2), spread_text(r.spread),
                     one > 0 ? fixed(r.gflops / one, 3) : "-",
                     all > 0 ? fixed(r.gflops / all, 3) : "-"});
    }
    std::cout << "\n"
              << table.markdown() << "spread = (slowest - fastest) / median of the repetitions\n"
              << "peers: " << peers::openblas_description() << "; " << peers::blis_description()
              << "\n";
    const std::string warning = peers::not_at_best_warning();
    if (!warning.empty()) std::cout << "WARNING: " << warning << ": the ratios are not results\n";
  }
};

void register_all() {
  const int all = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const std::vector<int> sizes{256, 512, 1024, 2048, 4096};
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
    // Rungs 1-3 take seconds per call at n = 1024 and minutes at 2048; n = 4096 is for the fast
    // rungs (8 and 9, the engine the later chapters use) and the peers.
    const int max_n = rung == Rung::kNaive     ? 512
                      : rung <= Rung::kBlocked ? 1024
                      : rung < Rung::kAvx512   ? 2048
                                               : 1 << 30;
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
  book::BenchArgs args(argc, argv);  // 5 repetitions, randomly interleaved, unless told otherwise
  book::init_benchmark(&args.argc(), args.argv());  // unknown flags refused; the machine's load
  std::cout << "peers: " << book::peers::openblas_description() << " (cblas_sgemm from "
            << book::gemm::openblas_cblas_library() << "); " << book::peers::blis_description()
            << "\n";
  book::gemm::register_all();
  book::gemm::RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}

int main(int argc, char** argv) {
  book::peers::use_peers_at_their_best(argc, argv);  // OpenBLAS's core and BLIS's configuration
  return book::run_main(argc, argv, bench_main);
}
