// bazel run -c opt //chapters/10_paged_attention:bench
//
// Decode attention on the CPU, one query per sequence over its whole context, one layer of 4
// heads of 128 (FP32): the fast kernel on the paged cache (blocks of 16, scattered over a shuffled
// pool) against the same kernel on the contiguous cache (one max-length slot per sequence), over
// batch and context length in one run — the price of the block table's indirection; the bytes of
// K and V it reads per second against the machine's measured memory bandwidth (chapter 1's triad);
// the fast kernel against the reference one (the exercise kv.paged_attention); its instruction
// sets against each other; and the fast kernel on two threads. Prints its tables after Google
// Benchmark's own.
#include <benchmark/benchmark.h>
#include <sys/mman.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "chapters/01_gemm_cpu/peak.h"
#include "chapters/10_paged_attention/attention_cpu.h"
#include "chapters/10_paged_attention/paged_attention.h"
#include "common/benchmark_flags.h"
#include "common/buffer.h"
#include "common/main.h"
#include "common/repetition_reporter.h"
#include "common/rng.h"
#include "common/table.h"
#include "common/timer.h"

namespace {

using namespace book::kv;

constexpr int kHeads = 4, kDim = 128, kBlock = 16;

constexpr std::size_t kHugePage = std::size_t{2} << 20;

// A K or V pool on 2 MiB pages where the kernel allows it (transparent huge pages in "madvise"
// mode, a common default). On 4 KiB pages a shuffled pool costs a TLB miss — a page-table walk,
// two-dimensional in a VM — for every 4 KiB of one head's keys, at a random place each time, where
// the contiguous cache walks neighbouring entries; a server's KV pool is one big allocation made
// once, so it is given huge pages, and both layouts here get the same.
book::AlignedBuffer<float, kHugePage> huge_page_pool(std::size_t numbers) {
  book::AlignedBuffer<float, kHugePage> pool(numbers);
  madvise(pool.data(), (numbers * sizeof(float) + kHugePage - 1) / kHugePage * kHugePage,
          MADV_HUGEPAGE);  // advice: where it is refused, the pool stays on small pages
  return pool;
}

// `batch` sequences of `context` random positions, paged (blocks of 16, shuffled) or contiguous.
struct Layer {
  book::AlignedBuffer<float, kHugePage> keys, values;
  std::vector<float> queries, out;
  std::vector<std::vector<BlockId>> tables;
  LayerKvView view;
  std::vector<AttentionQuery> batch;

  Layer(int batch_size, int context, bool paged) {
    const int bs = paged ? kBlock : context, per_seq = (context + bs - 1) / bs;
    const int blocks = batch_size * per_seq;
    const std::size_t numbers = static_cast<std::size_t>(blocks) * kHeads * bs * kDim;
    book::Rng rng(42);
    keys = huge_page_pool(numbers);
    values = huge_page_pool(numbers);
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

double kv_bytes(int batch, int context) {
  return 2.0 * batch * context * kHeads * kDim * sizeof(float);
}

// Arguments: layout (0 contiguous, 1 paged), batch, context, threads, path (KernelPath).
void BM_Fast(benchmark::State& state) {
  const auto path = static_cast<KernelPath>(state.range(4));
  if (!kernel_path_available(path)) {
    state.SkipWithError("this CPU or build lacks the path");
    return;
  }
  Layer layer(static_cast<int>(state.range(1)), static_cast<int>(state.range(2)), state.range(0));
  CpuPagedAttention kernel(static_cast<int>(state.range(3)), path);
  for (auto _ : state) {
    kernel.run(layer.view, layer.batch);
    benchmark::DoNotOptimize(layer.out.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(
      static_cast<double>(state.iterations()) *
      kv_bytes(static_cast<int>(state.range(1)), static_cast<int>(state.range(2)))));
}

void BM_Reference(benchmark::State& state) {
  Layer layer(static_cast<int>(state.range(1)), static_cast<int>(state.range(2)), state.range(0));
  for (auto _ : state) {
    paged_attention_reference(layer.view, layer.batch);
    benchmark::DoNotOptimize(layer.out.data());
  }
}

const int kBest = static_cast<int>(best_kernel_path());

void Shapes(benchmark::internal::Benchmark* b) {
  for (int layout : {0, 1})
    for (int batch : {1, 8, 32})
      for (int context : {128, 512, 2048}) b->Args({layout, batch, context, 1, kBest});
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (cores > 1)
    for (int layout : {0, 1}) b->Args({layout, 32, 2048, 2, kBest});
  // The slower paths on two shapes (in cache, from memory), paged: what each instruction set buys.
  for (int path = 0; path < kBest; ++path)
    for (const auto& [batch, context] : {std::pair{1, 512}, std::pair{32, 2048}})
      b->Args({1, batch, context, 1, path});
}
BENCHMARK(BM_Fast)
    ->Apply(Shapes)
    ->ArgNames({"paged", "batch", "context", "threads", "path"})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();
BENCHMARK(BM_Reference)
    ->Args({1, 8, 512, 1})
    ->Args({1, 32, 2048, 1})
    ->ArgNames({"paged", "batch", "context", "threads"})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

std::string fast_name(int paged, int batch, int context, int threads, int path) {
  return "BM_Fast/paged:" + std::to_string(paged) + "/batch:" + std::to_string(batch) +
         "/context:" + std::to_string(context) + "/threads:" + std::to_string(threads) +
         "/path:" + std::to_string(path) + "/real_time";
}
std::string reference_name(int batch, int context) {
  return "BM_Reference/paged:1/batch:" + std::to_string(batch) +
         "/context:" + std::to_string(context) + "/threads:1/real_time";
}

// Every repetition's time where they arrive (book::RepetitionReporter), and each benchmark's
// "median" aggregate: with --benchmark_report_aggregates_only or
// --benchmark_display_aggregates_only no single repetition reaches this reporter, only the
// aggregates.
class Reporter : public book::RepetitionReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs)
      if (run.run_type == Run::RT_Aggregate && run.aggregate_name == "median" &&
          !run.error_occurred)
        medians[run.run_name.str()] = run.GetAdjustedRealTime();
    book::RepetitionReporter::ReportRuns(runs);
  }
  std::map<std::string, double> medians;

  /// The median time of benchmark `key` (its repetitions', else its median aggregate's), if any.
  std::optional<double> median_of(const std::string& key) const {
    if (const auto it = times.find(key); it != times.end() && !it->second.empty())
      return book::median(it->second);
    if (const auto it = medians.find(key); it != medians.end()) return it->second;
    return std::nullopt;
  }
};

// "median x (min..max)" of a over b, the ratio taken per repetition (the i-th of each: with random
// interleaving they ran close together in time). With only aggregates, the ratio of the medians
// and an unknown spread.
std::string ratio_cell(const Reporter& reporter, const std::string& a, const std::string& b) {
  const auto times_a = reporter.times.find(a), times_b = reporter.times.find(b);
  if (times_a != reporter.times.end() && times_b != reporter.times.end()) {
    const std::size_t pairs = std::min(times_a->second.size(), times_b->second.size());
    std::vector<double> ratios;
    for (std::size_t i = 0; i < pairs; ++i)
      ratios.push_back(times_a->second[i] / times_b->second[i]);
    if (!ratios.empty()) {
      const auto [lo, hi] = std::minmax_element(ratios.begin(), ratios.end());
      return book::fixed(book::median(ratios), 2) + "x (" +
             (ratios.size() == 1 ? std::string("one repetition")
                                 : book::fixed(*lo, 2) + ".." + book::fixed(*hi, 2)) +
             ")";
    }
  }
  const auto median_a = reporter.median_of(a), median_b = reporter.median_of(b);
  if (!median_a || !median_b) return "-";
  return book::fixed(*median_a / *median_b, 2) + "x (spread unknown: aggregates only)";
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
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  // The ceiling the kernel is held to: decode attention reads every byte of K and V once, so on
  // shapes that do not fit in the caches memory bandwidth is its roofline.
  std::map<int, double> triad_gbs;
  triad_gbs[1] = book::gemm::measure_triad_bandwidth_gbs(1);
  if (cores > 1) triad_gbs[2] = book::gemm::measure_triad_bandwidth_gbs(2);
  Reporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);

  book::Table table({"batch", "context", "threads", "contiguous µs", "paged µs",
                     "paged speed / contiguous (min..max)", "GB/s of K+V (paged)",
                     "% of triad bandwidth", "fast / reference"});
  std::vector<std::tuple<int, int, int>> shapes;  // (threads, batch, context), the table's order
  for (int batch : {1, 8, 32})
    for (int context : {128, 512, 2048}) shapes.emplace_back(1, batch, context);
  shapes.emplace_back(2, 32, 2048);
  for (const auto& [threads, batch, context] : shapes) {
    const std::string contiguous_key = fast_name(0, batch, context, threads, kBest),
                      paged_key = fast_name(1, batch, context, threads, kBest);
    const auto contiguous = reporter.median_of(contiguous_key);
    const auto paged = reporter.median_of(paged_key);
    if (!contiguous || !paged) continue;  // filtered out, or failed
    const double gbs = kv_bytes(batch, context) / *paged / 1e3;
    const auto triad = triad_gbs.find(threads);
    const auto reference = reporter.median_of(reference_name(batch, context));
    table.add_row({std::to_string(batch), std::to_string(context), std::to_string(threads),
                   book::fixed(*contiguous, 1), book::fixed(*paged, 1),
                   ratio_cell(reporter, contiguous_key, paged_key), book::fixed(gbs, 2),
                   triad == triad_gbs.end() ? "-" : book::fixed(100 * gbs / triad->second, 0) + "%",
                   reference && threads == 1 ? book::fixed(*reference / *paged, 1) + "x" : "-"});
  }
  std::cout << "\none layer, " << kHeads << " heads of " << kDim << ", FP32, blocks of " << kBlock
            << "; kernel path: " << kernel_path_name(best_kernel_path())
            << "; medians of the repetitions\nmemory bandwidth (chapter 1's triad, STREAM's 12 "
               "bytes per element): ";
  for (const auto& [threads, gbs] : triad_gbs)
    std::cout << book::fixed(gbs, 1) << " GB/s on " << threads << " thread(s)  ";
  std::cout << "\n(above 100%: the shape's K and V fit in the caches)\n\n" << table.markdown();

  book::Table paths(
      {"batch", "context", "path", "paged µs",
       "speed / " + std::string(kernel_path_name(best_kernel_path())) + " (min..max)"});
  for (const auto& [batch, context] : {std::pair{1, 512}, std::pair{32, 2048}})
    for (int path = 0; path <= kBest; ++path) {
      const std::string key = fast_name(1, batch, context, 1, path);
      const auto time = reporter.median_of(key);
      if (!time) continue;
      paths.add_row({std::to_string(batch), std::to_string(context),
                     kernel_path_name(static_cast<KernelPath>(path)), book::fixed(*time, 1),
                     path == kBest
                         ? "1.00x"
                         : ratio_cell(reporter, fast_name(1, batch, context, 1, kBest), key)});
    }
  std::cout << "\nthe instruction sets, paged, one thread (the slower ones run the same passes "
               "narrower)\n\n"
            << paths.markdown();
  benchmark::Shutdown();
  return 0;
}

int main(int argc, char** argv) { return book::run_main(argc, argv, bench_main); }
