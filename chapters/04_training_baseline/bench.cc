// bazel run -c opt //chapters/04_training_baseline:bench
//
// One training step (forward, backward, AdamW) of the stage's model on one micro-batch: ours
// (hand-written layers on chapter 1's sgemm) against libtorch's (autograd, its own GEMM), same
// model, same batch size, same thread count. Prints tokens/s for both and the ratio.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <string>
#include <thread>

#include "chapters/01_gemm_cpu/sgemm.h"
#include "chapters/04_training_baseline/torch_peer.h"
#include "chapters/04_training_baseline/trainer.h"
#include "common/benchmark_flags.h"
#include "common/main.h"
#include "common/table.h"

namespace {

using namespace book::train;

TrainOptions bench_options(int micro_batch) {
  TrainOptions o;  // the stage's model: 2 layers, d_model 64, 4 heads, 3-digit addition
  o.micro_batch = micro_batch;
  o.accumulation = 1;
  o.total_steps = 1000000;
  o.warmup_steps = 10;
  return o;
}

void BM_OurStep(benchmark::State& state) {
  book::gemm::set_sgemm_threads(static_cast<int>(state.range(1)));
  Trainer trainer(bench_options(static_cast<int>(state.range(0))));
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
  for (auto _ : state) {
    const Batch batch = trainer.task().batch(rng, Split::kTrain, static_cast<int>(state.range(0)));
    benchmark::DoNotOptimize(
        peer.forward_backward(batch.tokens, batch.targets, batch.batch, batch.seq_len));
    peer.adamw_step(1e-3f);
  }
  state.counters["tokens/s"] =
      benchmark::Counter(static_cast<double>(trainer.tokens_per_step()) * state.iterations(),
                         benchmark::Counter::kIsRate);
}

// Arguments: sequences per micro-batch, threads (sgemm's for ours, intra-op for libtorch).
void Shapes(benchmark::internal::Benchmark* b) {
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  for (int batch : {32, 128})
    for (int threads : {1, cores}) {
      b->Args({batch, threads});
      if (cores == 1) break;
    }
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

// Collects each run's real time so main() can print ours / libtorch as a ratio table.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const auto& run : runs) seconds[run.benchmark_name()] = run.GetAdjustedRealTime();
    ConsoleReporter::ReportRuns(runs);
  }
  std::map<std::string, double> seconds;
};

}  // namespace

int bench_main(int argc, char** argv) {
  book::init_benchmark(&argc, argv);
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  book::Table table(
      {"sequences", "threads", "ours ms/step", "libtorch ms/step", "ours / libtorch tokens/s"});
  for (const auto& [name, ours_ms] : reporter.seconds) {
    if (name.rfind("BM_OurStep/", 0) != 0) continue;
    const std::string shape =
        name.substr(std::string("BM_OurStep/").size());  // batch:32/threads:1/real_time
    const auto torch = reporter.seconds.find("BM_LibtorchStep/" + shape);
    if (torch == reporter.seconds.end()) continue;
    const auto slash = shape.find('/'), second = shape.find('/', slash + 1);
    table.add_row({shape.substr(6, slash - 6), shape.substr(slash + 9, second - slash - 9),
                   book::fixed(ours_ms, 2), book::fixed(torch->second, 2),
                   book::fixed(torch->second / ours_ms, 2) + "x"});
  }
  std::cout << "\n" << table.markdown();
  benchmark::Shutdown();
  return 0;
}

int main(int argc, char** argv) { return book::run_main(argc, argv, bench_main); }
