// bazel run -c opt //chapters/04_training_baseline:bench
//
// One training step (forward, backward, AdamW) of the stage's model on one micro-batch: ours
// (hand-written layers on chapter 1's sgemm) against libtorch's (autograd, its own GEMM), same
// model, same batch size, same thread count. Each benchmark runs 5 times, the repetitions of all
// of them in a random interleaved order (common/bench_args.h; --benchmark_repetitions=N and
// --benchmark_enable_random_interleaving=false override it). Then it prints, from the medians:
//   - ours against libtorch in tokens/s, with each side's spread over its repetitions;
//   - our step on all threads against our step on one;
//   - where the time goes: each kind of layer's time per step on 1 and on all threads, measured
//     in rounds that alternate the two thread counts (layer_table.cc's turns, not Google
//     Benchmark's), the median round.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "chapters/01_gemm_cpu/sgemm.h"
#include "chapters/04_training_baseline/bench_layers.h"
#include "chapters/04_training_baseline/torch_peer.h"
#include "chapters/04_training_baseline/trainer.h"
#include "common/bench_args.h"
#include "common/benchmark_flags.h"
#include "common/main.h"
#include "common/table.h"
#include "common/timer.h"

namespace {

using namespace book::train;

void BM_OurStep(benchmark::State& state) {
  book::gemm::set_sgemm_threads(static_cast<int>(state.range(1)));
  Trainer trainer(bench_options(static_cast<int>(state.range(0))));
  trainer.step();  // warm-up: first-touch of the buffers, the threads started
  for (auto _ : state) benchmark::DoNotOptimize(trainer.step().loss);
  state.counters["tokens/s"] =
      benchmark::Counter(static_cast<double>(trainer.tokens_per_step()) * state.iterations(),
                         benchmark::Counter::kIsRate);
}

void BM_LibtorchStep(benchmark::State& state) {
  Trainer trainer(bench_options(static_cast<int>(state.range(0))));  // for the weights and the data
  TorchGpt peer(trainer.options().model, trainer.model().params().data(),
                static_cast<int>(state.range(1)));
  book::Rng rng(3);
  const auto step = [&] {
    const Batch batch = trainer.task().batch(rng, Split::kTrain, static_cast<int>(state.range(0)));
    const float loss =
        peer.forward_backward(batch.tokens, batch.targets, batch.batch, batch.seq_len);
    peer.adamw_step(1e-3f);
    return loss;
  };
  step();  // warm-up, as for ours
  for (auto _ : state) benchmark::DoNotOptimize(step());
  state.counters["tokens/s"] =
      benchmark::Counter(static_cast<double>(trainer.tokens_per_step()) * state.iterations(),
                         benchmark::Counter::kIsRate);
}

// Arguments: sequences per micro-batch, threads (sgemm's and the layers' for ours, intra-op for
// libtorch).
void Shapes(benchmark::internal::Benchmark* b) {
  for (int batch : kBenchSequences)
    for (int threads : bench_thread_counts()) b->Args({batch, threads});
}
BENCHMARK(BM_OurStep)
    ->Apply(Shapes)
    ->ArgNames({"batch", "threads"})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_LibtorchStep)
    ->Apply(Shapes)
    ->ArgNames({"batch", "threads"})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// Collects each repetition's real time per benchmark, so main() can print medians and spreads.
class StepReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const auto& run : runs) {
      if (run.error_occurred) continue;
      const std::string key = run.run_name.function_name + "/" + run.run_name.args;
      if (run.run_type == Run::RT_Iteration) repetitions[key].push_back(run.GetAdjustedRealTime());
      if (run.run_type == Run::RT_Aggregate && run.aggregate_name == "median")
        reported_medians[key] = run.GetAdjustedRealTime();
    }
    ConsoleReporter::ReportRuns(runs);
  }
  // Median and spread in milliseconds of "BM_OurStep/batch:32/threads:1", if it ran.
  bool get(const std::string& key, double& median_ms, double& spread) const {
    const auto it = repetitions.find(key);
    if (it != repetitions.end() && !it->second.empty()) {
      median_ms = book::median(it->second);
      spread = book::relative_spread(it->second);
      return true;
    }
    const auto m = reported_medians.find(key);  // --benchmark_display_aggregates_only
    if (m == reported_medians.end()) return false;
    median_ms = m->second;
    spread = -1;
    return true;
  }

 private:
  std::map<std::string, std::vector<double>> repetitions;
  std::map<std::string, double> reported_medians;
};

std::string spread_text(double spread) {
  return spread < 0 ? "-" : book::fixed(100 * spread, 1) + "%";
}

void print_ratio_table(const StepReporter& reporter) {
  book::Table table({"sequences", "threads", "ours ms/step", "ours spread", "libtorch ms/step",
                     "libtorch spread", "ours / libtorch tokens/s", "ours / ours on 1 thread"});
  for (int batch : kBenchSequences) {
    double one_thread_ms = 0, spread = 0;
    const std::string first = "/batch:" + std::to_string(batch) + "/threads:1";
    reporter.get("BM_OurStep" + first, one_thread_ms, spread);
    for (int threads : bench_thread_counts()) {
      const std::string shape =
          "/batch:" + std::to_string(batch) + "/threads:" + std::to_string(threads);
      double ours = 0, ours_spread = 0, torch = 0, torch_spread = 0;
      if (!reporter.get("BM_OurStep" + shape, ours, ours_spread)) continue;
      const bool has_torch = reporter.get("BM_LibtorchStep" + shape, torch, torch_spread);
      table.add_row({std::to_string(batch), std::to_string(threads), book::fixed(ours, 2),
                     spread_text(ours_spread), has_torch ? book::fixed(torch, 2) : "-",
                     has_torch ? spread_text(torch_spread) : "-",
                     has_torch ? book::fixed(torch / ours, 2) + "x" : "-",
                     one_thread_ms > 0 ? book::fixed(one_thread_ms / ours, 2) + "x" : "-"});
    }
  }
  std::cout << "\nMedians of each benchmark's repetitions; spread = (slowest - fastest) / median "
               "of its repetitions.\n\n"
            << table.markdown();
}

}  // namespace

int bench_main(int argc, char** argv) {
  book::BenchArgs args(argc, argv);
  book::init_benchmark(&args.argc(), args.argv());  // unknown flags refused; the machine's load
  StepReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  print_ratio_table(reporter);
  book::gemm::set_sgemm_threads(0);
  std::cout << "\n" << layer_table_markdown(kLayerTableSequences, kLayerTableRounds);
  benchmark::Shutdown();
  return 0;
}

int main(int argc, char** argv) { return book::run_main(argc, argv, bench_main); }
