// bazel run -c opt //chapters/13_disaggregation_speculation/pd:bench
//
// Colocated against split in one run, the same workload for each: one chapter-11 engine with
// chunked prefill on two threads, the same on one thread (the control: on a busy two-core machine
// two threads that meet at every GEMM can lose to one), and one prefill + one decode worker on
// chapter 3's thread ranks (one thread each). Two workloads: a burst (every request at once: the
// time to finish them all) and a Poisson stream at 60/s (where the tail of TPOT is what the split
// protects). Medians of 5 repetitions in a random interleaved order (common/bench_args.h), then
// the ratio table: each system's time and P99s against the two-thread colocated engine.
#include <benchmark/benchmark.h>

#include <cmath>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "chapters/01_gemm_cpu/sgemm.h"
#include "chapters/10_paged_attention/served_model.h"
#include "chapters/13_disaggregation_speculation/pd/disaggregated.h"
#include "common/bench_args.h"
#include "common/benchmark_flags.h"
#include "common/main.h"
#include "common/repetition_reporter.h"
#include "common/rng.h"
#include "common/table.h"

namespace {

using namespace book;
using namespace book::pd;

enum System { kColocated2, kColocated1, kSplit };
const char* const kSystemNames[] = {"colocated, chunked, 2 threads",
                                    "colocated, chunked, 1 thread (control)",
                                    "1 prefill + 1 decode worker (threads)"};
const char* const kWorkloadNames[] = {"burst: 16 requests at once", "Poisson: 32 at 60/s"};

// The pd stage's wall-clock model: chapter 4's GPT, 4 layers of width 128, random weights (the
// trained addition model's 8 positions are too short for a prefill to cost anything).
train::Model<float>& model() {
  static auto m = [] {
    train::Config c;
    c.vocab_size = 64, c.context = 256, c.n_layer = 4, c.n_head = 4, c.d_model = 128;
    return kv::random_model(c, 5);
  }();
  return *m;
}

// Prompts of 64..192 tokens, outputs of 24..48: prefill-heavy, where interference shows.
std::vector<TimedGeneration> workload(int which) {
  const int n = which == 0 ? 16 : 32;
  Rng rng(7);
  std::vector<TimedGeneration> out(n);
  double t = 0;
  for (auto& g : out) {
    if (which == 1) t += -std::log(1.0 - rng.uniform()) * 1000.0 / 60.0;
    g.arrival_ms = t;
    g.request.prompt.resize(rng.uniform_int(64, 192));
    for (int& token : g.request.prompt) token = static_cast<int>(rng.uniform_int(0, 63));
    g.request.max_tokens = static_cast<int>(rng.uniform_int(24, 48));
  }
  return out;
}

WorkerConfig worker(int threads, int budget) {
  WorkerConfig w;
  w.kv_blocks = 16 * 16;  // 16 requests of the whole context: memory is not what is compared
  w.block_size = 16;
  w.scheduler = {16, budget, true};
  w.threads = threads;
  return w;
}

PdResult serve(System system, const std::vector<TimedGeneration>& requests) {
  if (system == kSplit) {
    const gemm::SgemmThreads one(1);  // each worker one thread: two in all
    PdConfig split;
    split.prefill = worker(1, 256);
    split.decode = worker(1, 64);
    return serve_disaggregated(model(), requests, split);
  }
  const int threads = system == kColocated2 ? 2 : 1;
  const gemm::SgemmThreads scope(threads);
  return serve_colocated(model(), requests, worker(threads, 64));
}

// Arguments: workload (0 burst, 1 Poisson), system. One serving run per iteration; its P99s
// are the counters.
void BM_Serve(benchmark::State& state) {
  const auto requests = workload(static_cast<int>(state.range(0)));
  const auto system = static_cast<System>(state.range(1));
  serve::ServingSummary s{};
  for (auto _ : state) s = serve::summarize(serve(system, requests).timings, serve::Slo{});
  state.counters["ttft_p99_ms"] = s.ttft_p99;
  state.counters["tpot_p99_ms"] = s.tpot_p99;
}
BENCHMARK(BM_Serve)
    ->ArgNames({"workload", "system"})
    ->ArgsProduct({{0, 1}, {kColocated2, kColocated1, kSplit}})
    ->Iterations(1)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// The repetitions' times (the base class) and their P99 counters, by benchmark name.
class Reporter : public RepetitionReporter {
 public:
  std::map<std::string, std::map<std::string, std::vector<double>>> counters;
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      if (run.error_occurred) continue;
      auto& mine = counters[run.run_name.str()];
      const bool iteration = run.run_type == Run::RT_Iteration;
      if (!iteration && run.aggregate_name != "median") continue;
      for (const auto& [name, counter] : run.counters)
        if (iteration || mine[name].empty()) mine[name].push_back(counter.value);
    }
    RepetitionReporter::ReportRuns(runs);
  }
};

std::string name_of(int workload, int system) {
  return "BM_Serve/workload:" + std::to_string(workload) + "/system:" + std::to_string(system) +
         "/iterations:1/real_time";
}

// "median (min..max)" of a / b taken per repetition (the i-th of each ran close in time).
std::string ratio(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> r;
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) r.push_back(a[i] / b[i]);
  if (r.empty()) return "-";
  const auto [lo, hi] = std::minmax_element(r.begin(), r.end());
  return fixed(median(r), 2) + "x" +
         (r.size() > 1 ? " (" + fixed(*lo, 2) + ".." + fixed(*hi, 2) + ")" : "");
}

int body(int argc, char** argv) {
  BenchArgs args(argc, argv);
  init_benchmark(&args.argc(), args.argv());
  Reporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  if (benchmark_listing_only()) return 0;
  Table table({"workload", "system", "time ms", "time / colocated 2T (min..max)", "TTFT P99 ms",
               "TPOT P99 ms", "TPOT P99 / colocated 2T"});
  for (int w = 0; w < 2; ++w) {
    const std::string base = name_of(w, kColocated2);
    for (int s = kColocated2; s <= kSplit; ++s) {
      const std::string name = name_of(w, s);
      const auto times = reporter.times.find(name);
      if (times == reporter.times.end() || times->second.empty()) continue;  // filtered out
      auto& c = reporter.counters[name];
      auto& b = reporter.counters[base];
      const bool have_base = reporter.times.count(base) > 0;
      // Where only Google Benchmark's medians arrived, a ratio of medians: its spread is unknown.
      const std::string note = reporter.only_median.count(name) ? " (aggregates only)" : "";
      table.add_row({kWorkloadNames[w], kSystemNames[s], fixed(median(times->second), 1),
                     have_base ? ratio(times->second, reporter.times[base]) + note : "-",
                     fixed(median(c["ttft_p99_ms"]), 1), fixed(median(c["tpot_p99_ms"]), 2),
                     have_base ? ratio(c["tpot_p99_ms"], b["tpot_p99_ms"]) : "-"});
    }
  }
  std::cout << "\ncolocated vs split, the same workloads; medians of the repetitions (ratios "
               "taken per repetition: below 1.00x the system beats the two-thread colocated "
               "engine)\n\n"
            << table.markdown();
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return run_main(argc, argv, body); }
