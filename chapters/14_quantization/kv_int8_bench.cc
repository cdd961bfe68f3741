// bazel run -c opt //chapters/14_quantization:kv_int8_bench
//
// Decode attention over an INT8 KV cache against the same over chapter 10's FP32 cache, in one
// run: one query per sequence over its whole context, one layer of 4 heads of 128, blocks of 16
// scattered over a shuffled pool (chapter 10's bench's shapes). The peer is chapter 10's
// CpuPagedAttention on its fastest path here (printed); the INT8 kernel runs its fastest path too.
// Decode attention reads every byte of K and V once per query, so where K and V do not fit in the
// caches a quarter of the bytes should show as speed. Prints its table after Google Benchmark's.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <iostream>
#include <numeric>
#include <string>
#include <vector>

#include "chapters/10_paged_attention/attention_cpu.h"
#include "chapters/10_paged_attention/kv_cache.h"
#include "chapters/14_quantization/kv_int8_attention.h"
#include "common/bench_args.h"
#include "common/benchmark_flags.h"
#include "common/main.h"
#include "common/repetition_reporter.h"
#include "common/rng.h"
#include "common/table.h"

namespace {

using namespace book;

constexpr int kHeads = 4, kDim = 128, kBlock = 16;

// `batch` sequences of `context` positions of random keys and values (uniform in [−1, 1]) in an
// FP32 or an INT8 PagedKvCache, the blocks handed out in shuffled order.
struct Decode {
  std::unique_ptr<kv::PagedKvCache> cache;
  std::vector<float> queries, out;
  std::vector<std::vector<kv::BlockId>> tables;
  std::vector<kv::AttentionQuery> batch;

  Decode(int batch_size, int context, bool int8) {
    const kv::KvShape shape{1, kHeads, kDim};
    const int per_seq = kv::blocks_for(context, kBlock), blocks = batch_size * per_seq;
    const float scale = 1.0f / kv::kKvInt8Max;  // |x| <= 1: the range's own absmax
    cache = int8 ? std::make_unique<kv::PagedKvCache>(
                       shape, blocks, kBlock,
                       kv::KvInt8Scales{std::vector<float>(kHeads, scale),
                                        std::vector<float>(kHeads, scale)})
                 : std::make_unique<kv::PagedKvCache>(shape, blocks, kBlock);
    Rng rng(42);
    std::vector<kv::BlockId> order(blocks);
    std::iota(order.begin(), order.end(), 0);
    for (int b = blocks - 1; b > 0; --b) std::swap(order[b], order[rng.uniform_int(0, b)]);
    std::vector<float> k(kHeads * kDim), v(k.size());
    for (int s = 0; s < batch_size; ++s) {
      tables.emplace_back(order.begin() + s * per_seq, order.begin() + (s + 1) * per_seq);
      for (int p = 0; p < context; ++p) {
        for (auto& x : k) x = static_cast<float>(rng.uniform(-1, 1));
        for (auto& x : v) x = static_cast<float>(rng.uniform(-1, 1));
        cache->write(0, {tables[s][p / kBlock], p % kBlock}, k.data(), v.data());
      }
    }
    queries.resize(static_cast<std::size_t>(batch_size) * kHeads * kDim);
    for (auto& x : queries) x = static_cast<float>(rng.uniform(-1, 1));
    out.resize(queries.size());
    for (int s = 0; s < batch_size; ++s)
      batch.push_back({queries.data() + static_cast<std::size_t>(s) * kHeads * kDim,
                       out.data() + static_cast<std::size_t>(s) * kHeads * kDim, tables[s],
                       context});
  }
};

// Arguments: int8 (0: chapter 10's FP32 kernel, the peer; 1: the INT8 kernel), batch, context.
void BM_Decode(benchmark::State& state) {
  const bool int8 = state.range(0) != 0;
  Decode decode(static_cast<int>(state.range(1)), static_cast<int>(state.range(2)), int8);
  kv::CpuPagedAttention fp32_kernel;
  quant::Int8PagedAttention int8_kernel;
  for (auto _ : state) {
    if (int8)
      int8_kernel.run(decode.cache->layer_int8(0), decode.batch);
    else
      fp32_kernel.run(decode.cache->layer(0), decode.batch);
    benchmark::DoNotOptimize(decode.out.data());
  }
  state.counters["kv_bytes"] = static_cast<double>(decode.cache->bytes());
}
BENCHMARK(BM_Decode)
    ->ArgsProduct({{0, 1}, {1, 8, 32}, {512, 2048}})
    ->ArgNames({"int8", "batch", "context"})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

std::string key(int int8, int batch, int context) {
  return "BM_Decode/int8:" + std::to_string(int8) + "/batch:" + std::to_string(batch) +
         "/context:" + std::to_string(context) + "/real_time";
}

int bench_main(int argc, char** argv) {
  BenchArgs args(argc, argv);  // 5 repetitions, randomly interleaved, unless told otherwise
  init_benchmark(&args.argc(), args.argv());
  RepetitionReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  Table table({"batch", "context", "KV MiB fp32", "fp32 µs (spread)", "int8 µs (spread)",
               "fp32 / int8 time, per repetition (min..max)"});
  for (const int batch : {1, 8, 32})
    for (const int context : {512, 2048}) {
      double fp32 = 0, int8 = 0, fp32_spread = 0, int8_spread = 0;
      if (!reporter.summary(key(0, batch, context), &fp32, &fp32_spread) ||
          !reporter.summary(key(1, batch, context), &int8, &int8_spread))
        continue;  // filtered out
      const auto& a = reporter.times.at(key(0, batch, context));
      const auto& b = reporter.times.at(key(1, batch, context));
      std::vector<double> ratios;
      for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) ratios.push_back(a[i] / b[i]);
      const auto [lo, hi] = std::minmax_element(ratios.begin(), ratios.end());
      table.add_row(
          {std::to_string(batch), std::to_string(context),
           fixed(2.0 * batch * context * kHeads * kDim * 4 / (1 << 20), 1),
           fixed(fp32, 1) + " (" + spread_text(fp32_spread) + ")",
           fixed(int8, 1) + " (" + spread_text(int8_spread) + ")",
           fixed(median(ratios), 2) + "x (" + fixed(*lo, 2) + ".." + fixed(*hi, 2) + ")"});
    }
  std::cout << "\none layer, " << kHeads << " heads of " << kDim << ", blocks of " << kBlock
            << " shuffled, one thread; peer: chapter 10's CpuPagedAttention ("
            << kv::kernel_path_name(kv::best_kernel_path())
            << ", FP32); INT8 kernel: " << quant::Int8PagedAttention().path_name()
            << "; medians of the repetitions\n\n"
            << table.markdown();
  benchmark::Shutdown();
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return run_main(argc, argv, bench_main); }
