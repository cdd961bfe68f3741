// bazel run -c opt //chapters/10_paged_attention:bench
//
// Decode attention on the CPU, one query per sequence over its whole context, one layer of 4
// heads of 128 (FP32): the fast kernel on the paged cache (blocks of 16, scattered over a shuffled
// pool) against the same kernel on the contiguous cache (one max-length slot per sequence), over
// batch and context length in one run — the price of the block table's indirection; the fast
// kernel against the reference one (the exercise kv.paged_attention); and the fast kernel on two
// threads. Prints a ratio table after Google Benchmark's own.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "chapters/10_paged_attention/attention_cpu.h"
#include "chapters/10_paged_attention/paged_attention.h"
#include "common/benchmark_flags.h"
#include "common/main.h"
#include "common/repetition_reporter.h"
#include "common/rng.h"
#include "common/table.h"
#include "common/timer.h"

namespace {

using namespace book::kv;

constexpr int kHeads = 4, kDim = 128, kBlock = 16;

// `batch` sequences of `context` random positions, paged (blocks of 16, shuffled) or contiguous.
struct Layer {
  std::vector<float> keys, values, queries, out;
  std::vector<std::vector<BlockId>> tables;
  LayerKvView view;
  std::vector<AttentionQuery> batch;

  Layer(int batch_size, int context, bool paged) {
    const int bs = paged ? kBlock : context, per_seq = (context + bs - 1) / bs;
    const int blocks = batch_size * per_seq;
    const std::size_t numbers = static_cast<std::size_t>(blocks) * kHeads * bs * kDim;
    book::Rng rng(42);
    keys.resize(numbers);
    values.resize(numbers);
    for (auto& x : keys) x = static_cast<float>(rng.uniform(-1, 1));
    for (auto& x : values) x = static_cast<float>(rng.uniform(-1, 1));
    std::vector<BlockId> order(blocks);
    for (int b = 0; b < blocks; ++b) order[b] = b;
    if (paged)  // a long-running server's free queue hands out blocks in no particular order
      for (int b = blocks - 1; b > 0; --b) std::swap(order[b], order[rng.uniform_int(0, b)]);
    queries.resize(static_cast<std::size_t>(batch_size) * kHeads * kDim);
    for (auto& x : queries) x = static_cast<float>(rng.uniform(-1, 1));
    out.resize(queries.size());
    view = {keys.data(), values.data(), blocks, bs, kHeads, kDim};
    for (int s = 0; s < batch_size; ++s)
      tables.emplace_back(order.begin() + s * per_seq, order.begin() + (s + 1) * per_seq);
    for (int s = 0; s < batch_size; ++s)
      batch.push_back({queries.data() + static_cast<std::size_t>(s) * kHeads * kDim,
                       out.data() + static_cast<std::size_t>(s) * kHeads * kDim, tables[s],
                       context});
  }
};

// Arguments: layout (0 contiguous, 1 paged), batch, context, threads.
void BM_Fast(benchmark::State& state) {
  Layer layer(static_cast<int>(state.range(1)), static_cast<int>(state.range(2)), state.range(0));
  CpuPagedAttention kernel(static_cast<int>(state.range(3)));
  for (auto _ : state) {
    kernel.run(layer.view, layer.batch);
    benchmark::DoNotOptimize(layer.out.data());
  }
  state.SetBytesProcessed(state.iterations() * 2 * state.range(1) * state.range(2) * kHeads * kDim *
                          static_cast<std::int64_t>(sizeof(float)));
}

void BM_Reference(benchmark::State& state) {
  Layer layer(static_cast<int>(state.range(1)), static_cast<int>(state.range(2)), state.range(0));
  for (auto _ : state) {
    paged_attention_reference(layer.view, layer.batch);
    benchmark::DoNotOptimize(layer.out.data());
  }
}

void Shapes(benchmark::internal::Benchmark* b) {
  for (int layout : {0, 1})
    for (int batch : {1, 8, 32})
      for (int context : {128, 512, 2048}) b->Args({layout, batch, context, 1});
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (cores > 1)
    for (int layout : {0, 1}) b->Args({layout, 32, 2048, 2});
}
BENCHMARK(BM_Fast)
    ->Apply(Shapes)
    ->ArgNames({"paged", "batch", "context", "threads"})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();
BENCHMARK(BM_Reference)
    ->Args({1, 8, 512, 1})
    ->Args({1, 32, 2048, 1})
    ->ArgNames({"paged", "batch", "context", "threads"})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

std::string name(const char* bm, int paged, int batch, int context, int threads) {
  return std::string(bm) + "/paged:" + std::to_string(paged) + "/batch:" + std::to_string(batch) +
         "/context:" + std::to_string(context) + "/threads:" + std::to_string(threads) +
         "/real_time";
}

}  // namespace

int bench_main(int argc, char** argv) {
  // Five repetitions in random order unless the command line says otherwise: on a shared machine a
  // single run in a fixed order measures whoever else was running.
  std::vector<char*> args(argv, argv + argc);
  std::string repetitions = "--benchmark_repetitions=5",
              interleave = "--benchmark_enable_random_interleaving=true";
  const auto given = [&](const char* flag) {
    return std::any_of(args.begin(), args.end(),
                       [&](const char* a) { return std::string(a).rfind(flag, 0) == 0; });
  };
  if (!given("--benchmark_repetitions")) args.push_back(repetitions.data());
  if (!given("--benchmark_enable_random_interleaving")) args.push_back(interleave.data());
  int count = static_cast<int>(args.size());
  book::init_benchmark(&count, args.data());  // unknown flags refused; the machine's load
  book::RepetitionReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  auto find = [&](const std::string& key) {
    return reporter.times.contains(key) ? reporter.times.at(key) : std::vector<double>{};
  };
  // Rows sorted by threads, batch, context (the map's order is by name, "1" < "128" < "2048" <
  // "32").
  std::vector<std::tuple<int, int, int, std::string>> shapes;
  for (const auto& [key, runs] : reporter.times) {
    int batch = 0, context = 0, threads = 0;
    if (std::sscanf(key.c_str(), "BM_Fast/paged:0/batch:%d/context:%d/threads:%d", &batch, &context,
                    &threads) == 3)
      shapes.emplace_back(threads, batch, context, key);
  }
  std::sort(shapes.begin(), shapes.end());
  book::Table table({"batch", "context", "threads", "contiguous µs", "paged µs",
                     "paged speed / contiguous (min..max)", "GB/s of K+V (paged)",
                     "fast / reference"});
  for (const auto& [threads, batch, context, key] : shapes) {
    const auto& contiguous_runs = reporter.times.at(key);
    const auto paged_runs = find(name("BM_Fast", 1, batch, context, threads));
    if (paged_runs.empty()) continue;
    const double contiguous = book::median(contiguous_runs), paged = book::median(paged_runs);
    // The spread of the ratio over repetitions taken pairwise (the i-th of each).
    double lo = 1e30, hi = 0;
    for (std::size_t i = 0; i < std::min(paged_runs.size(), contiguous_runs.size()); ++i) {
      lo = std::min(lo, contiguous_runs[i] / paged_runs[i]);
      hi = std::max(hi, contiguous_runs[i] / paged_runs[i]);
    }
    const auto reference_runs = find(name("BM_Reference", 1, batch, context, 1));
    const double reference = reference_runs.empty() ? 0.0 : book::median(reference_runs);
    const double bytes = 2.0 * batch * context * kHeads * kDim * sizeof(float);
    table.add_row({std::to_string(batch), std::to_string(context), std::to_string(threads),
                   book::fixed(contiguous, 1), book::fixed(paged, 1),
                   book::fixed(contiguous / paged, 2) + "x (" + book::fixed(lo, 2) + ".." +
                       book::fixed(hi, 2) + ")",
                   book::fixed(bytes / paged / 1e3, 2),
                   reference > 0 && threads == 1 ? book::fixed(reference / paged, 1) + "x" : "-"});
  }
  std::cout << "\none layer, " << kHeads << " heads of " << kDim << ", FP32, blocks of " << kBlock
            << "; " << (CpuPagedAttention::vectorised() ? "AVX2 + FMA" : "plain loops")
            << "; medians of the repetitions\n\n"
            << table.markdown();
  benchmark::Shutdown();
  return 0;
}

int main(int argc, char** argv) { return book::run_main(argc, argv, bench_main); }
