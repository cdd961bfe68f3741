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
#include <cmath>
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
#include "common/check.h"
#include "common/main.h"
#include "common/peers.h"
#include "common/repetition_reporter.h"
#include "common/table.h"
#include "common/timer.h"

namespace {

using namespace book::train;

void BM_OurStep(benchmark::State& state) {
  const book::gemm::SgemmThreads scope(static_cast<int>(state.range(1)));
  Trainer trainer(bench_options(static_cast<int>(state.range(0))));
  trainer.step();  // warm-up: first-touch of the buffers, the threads started
  for (auto _ : state) benchmark::DoNotOptimize(trainer.step().loss);
  state.counters["tokens/s"] =
      benchmark::Counter(static_cast<double>(trainer.tokens_per_step()) * state.iterations(),
                         benchmark::Counter::kIsRate);
}

// libtorch runs two thread pools: its intra-op threads (OpenMP) and the pool of the BLAS its
// matrix products call (OpenBLAS). Each (intra-op, BLAS) split of the step's threads is a
// benchmark of its own; the table compares ours with the fastest, and names it.
void BM_LibtorchStep(benchmark::State& state) {
  Trainer trainer(bench_options(static_cast<int>(state.range(0))));  // for the weights and the data
  TorchGpt peer(trainer.options().model, trainer.model().params().data(),
                static_cast<int>(state.range(2)), static_cast<int>(state.range(3)));
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

// The (intra-op, BLAS) thread splits of `threads` cores: every pair whose product is `threads`.
std::vector<std::pair<int, int>> torch_splits(int threads) {
  std::vector<std::pair<int, int>> out;
  for (int intra = 1; intra <= threads; ++intra)
    if (threads % intra == 0) out.push_back({intra, threads / intra});
  return out;
}

// Arguments: sequences per micro-batch, threads (sgemm's and the layers' for ours, intra-op for
// libtorch).
void Shapes(benchmark::internal::Benchmark* b) {
  for (int batch : kBenchSequences)
    for (int threads : bench_thread_counts()) b->Args({batch, threads});
}
// Arguments: sequences, threads, then libtorch's intra-op and BLAS threads (their product).
void TorchShapes(benchmark::internal::Benchmark* b) {
  for (int batch : kBenchSequences)
    for (int threads : bench_thread_counts())
      for (const auto& [intra, blas] : torch_splits(threads))
        b->Args({batch, threads, intra, blas});
}
BENCHMARK(BM_OurStep)
    ->Apply(Shapes)
    ->ArgNames({"batch", "threads"})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_LibtorchStep)
    ->Apply(TorchShapes)
    ->ArgNames({"batch", "threads", "intra", "blas"})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void print_ratio_table(const book::RepetitionReporter& reporter) {
  book::Table table({"sequences", "threads", "ours ms/step", "ours spread", "libtorch ms/step",
                     "libtorch spread", "libtorch threads (intra-op x BLAS)",
                     "ours / libtorch tokens/s", "ours / ours on 1 thread"});
  for (int batch : kBenchSequences) {
    double one_thread_ms = 0, spread = 0;
    const std::string first = "/batch:" + std::to_string(batch) + "/threads:1/real_time";
    reporter.summary("BM_OurStep" + first, &one_thread_ms, &spread);
    for (int threads : bench_thread_counts()) {
      const std::string shape =
          "/batch:" + std::to_string(batch) + "/threads:" + std::to_string(threads);
      double ours = 0, ours_spread = 0;
      if (!reporter.summary("BM_OurStep" + shape + "/real_time", &ours, &ours_spread)) continue;
      // The peer at its best: the fastest of its thread splits.
      double torch = 0, torch_spread = 0;
      std::string split = "-";
      for (const auto& [intra, blas] : torch_splits(threads)) {
        double ms = 0, ms_spread = 0;
        const std::string name = "BM_LibtorchStep" + shape + "/intra:" + std::to_string(intra) +
                                 "/blas:" + std::to_string(blas) + "/real_time";
        if (reporter.summary(name, &ms, &ms_spread) && (torch == 0 || ms < torch)) {
          torch = ms;
          torch_spread = ms_spread;
          split = std::to_string(intra) + " x " + std::to_string(blas);
        }
      }
      const bool has_torch = torch > 0;
      table.add_row({std::to_string(batch), std::to_string(threads), book::fixed(ours, 2),
                     book::spread_text(ours_spread), has_torch ? book::fixed(torch, 2) : "-",
                     has_torch ? book::spread_text(torch_spread) : "-", split,
                     has_torch ? book::peers::ratio_against(torch / ours, "libtorch") : "-",
                     one_thread_ms > 0 ? book::fixed(one_thread_ms / ours, 2) + "x" : "-"});
    }
  }
  std::cout << "\nMedians of each benchmark's repetitions; spread = (slowest - fastest) / median "
               "of its repetitions. libtorch: the fastest of its (intra-op x BLAS) thread splits "
               "whose product is the thread count.\n\n"
            << table.markdown();
}

// The peer is timed only if it computes the same loss as ours on this machine's kernels (ATen's
// ISA and OpenBLAS's core are chosen for this CPU, common/peers.h).
void check_peer() {
  Trainer trainer(bench_options(kBenchSequences[0]));
  Model<float>& model = trainer.model();
  book::Rng rng(101);
  const Batch batch = trainer.task().batch(rng, Split::kTrain, kBenchSequences[0]);
  const float ours =
      model.forward(batch.tokens.data(), batch.targets.data(), batch.batch, batch.seq_len);
  TorchGpt peer(trainer.options().model, model.params().data());
  const float theirs =
      peer.forward_backward(batch.tokens, batch.targets, batch.batch, batch.seq_len);
  BOOK_CHECK(std::fabs(ours - theirs) <= 1e-4f * std::fabs(theirs),
             "libtorch's loss " << theirs << " differs from ours " << ours
                                << " on the same weights and batch: its configuration here ("
                                << TorchGpt::configuration()
                                << ") computes wrong results; rerun with BOOK_PEERS=as-is");
  std::cout << "peer: " << TorchGpt::configuration() << "; its loss equals ours (" << theirs
            << ")\n";
  const std::string warning = book::peers::not_at_best_warning();
  if (!warning.empty()) std::cout << "WARNING: " << warning << ": its ratios are not results\n";
}

}  // namespace

int bench_main(int argc, char** argv) {
  book::BenchArgs args(argc, argv);
  book::init_benchmark(&args.argc(), args.argv());  // unknown flags refused; the machine's load
  book::RepetitionReporter reporter;
  if (book::benchmark_listing_only()) {  // only the names: nothing is measured
    benchmark::RunSpecifiedBenchmarks(&reporter);
    benchmark::Shutdown();
    return 0;
  }
  check_peer();
  benchmark::RunSpecifiedBenchmarks(&reporter);
  print_ratio_table(reporter);
  std::cout << "\n" << layer_table_markdown(kLayerTableSequences, kLayerTableRounds);
  benchmark::Shutdown();
  return 0;
}

int main(int argc, char** argv) {
  book::peers::use_peers_at_their_best(argc, argv);  // libtorch's OpenBLAS core and ATen's ISA
  return book::run_main(argc, argv, bench_main);
}
