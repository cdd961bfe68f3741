// The benchmark's W8A8 section (bench_main.cc runs it; bench_sections.h): the W8A8 GEMM against
// its peers, same shapes, same thread counts, in one run:
//   - the integer GEMM alone, s8 activations × s8 weights → exact s32 sums: ours
//     (w8a8_accumulate) against oneDNN's INT8 matmul (weights reordered to its blocked layout
//     once, outside the timing); both outputs are checked equal before timing;
//   - the whole dynamically quantised linear layer, FP32 in → FP32 out (quantise the activations
//     per token, integer GEMM, scales, bias): ours (w8a8_linear) against PyTorch's
//     quantize_dynamic(nn.Linear) on its fastest quantised engine here (w8a8_torch_peer.py,
//     run once after the Google Benchmarks, with its own timer: its medians are not interleaved
//     with ours), and against chapter 1's FP32 sgemm on the same shape (y = x · Wᵀ).
// Shapes: tokens m in {1, 16, 64, 256}, n = k in {1024, 4096}; threads 1 and all. Medians of
// interleaved repetitions (common/bench_args.h), spreads stated.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "chapters/01_gemm_cpu/sgemm.h"
#include "chapters/14_quantization/bench_sections.h"
#include "chapters/14_quantization/quant.h"
#include "chapters/14_quantization/w8a8.h"
#include "chapters/14_quantization/w8a8_onednn_peer.h"
#include "common/bench_args.h"
#include "common/benchmark_flags.h"
#include "common/check.h"
#include "common/cpu.h"
#include "common/main.h"
#include "common/peers.h"
#include "common/repetition_reporter.h"
#include "common/rng.h"
#include "common/table.h"

namespace {

namespace fs = std::filesystem;
using namespace book::quant;

constexpr int kTokens[] = {1, 16, 64, 256};
constexpr int kSizes[] = {1024, 4096};

std::vector<int> thread_counts() {
  const int all = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return all > 1 ? std::vector<int>{1, all} : std::vector<int>{1};
}

// One layer of n = k = size: FP32 weights, their INT8 quantisation packed for our best kernel.
struct Layer {
  std::vector<float> w, bias;
  QuantizedMatrix q;
  std::unique_ptr<W8A8Weights> packed;
};

Layer& layer(int size) {
  static std::map<int, Layer> layers;
  Layer& l = layers[size];
  if (l.packed) return l;
  book::Rng rng(static_cast<std::uint64_t>(size));
  l.w.resize(static_cast<std::size_t>(size) * size);
  book::fill_uniform(std::span<float>(l.w), rng, -0.05, 0.05);
  l.bias.resize(size);
  book::fill_uniform(std::span<float>(l.bias), rng, -0.1, 0.1);
  l.q = quantize(l.w, size, size, Scheme{});
  l.packed = std::make_unique<W8A8Weights>(l.q);
  return l;
}

std::vector<float> activations(int tokens, int size) {
  book::Rng rng(static_cast<std::uint64_t>(tokens * 7 + size));
  std::vector<float> x(static_cast<std::size_t>(tokens) * size);
  book::fill_uniform(std::span<float>(x), rng, -2.0, 2.0);
  return x;
}

OneDnnInt8Matmul& onednn(int tokens, int size) {
  static std::map<std::pair<int, int>, std::unique_ptr<OneDnnInt8Matmul>> peers;
  auto& p = peers[{tokens, size}];
  if (!p) {
    const QuantizedMatrix& q = layer(size).q;
    p = std::make_unique<OneDnnInt8Matmul>(
        std::span(reinterpret_cast<const std::int8_t*>(q.data.data()), q.data.size()), size, size,
        tokens);
  }
  return *p;
}

void count_ops(benchmark::State& state, int m, int size) {
  state.counters["GOP/s"] = benchmark::Counter(2.0 * m * size * size * state.iterations() / 1e9,
                                               benchmark::Counter::kIsRate);
}

void BM_W8A8OursSums(benchmark::State& state) {
  const int m = static_cast<int>(state.range(0)), size = static_cast<int>(state.range(1));
  const int threads = static_cast<int>(state.range(2));
  W8A8Activations x;
  quantize_activations(activations(m, size), m, size, x);
  std::vector<std::int32_t> acc(static_cast<std::size_t>(m) * size);
  const W8A8Weights& w = *layer(size).packed;
  for (auto _ : state) {
    w8a8_accumulate(x, w, acc, threads);
    benchmark::DoNotOptimize(acc.data());
  }
  count_ops(state, m, size);
}

void BM_W8A8OneDnnSums(benchmark::State& state) {
  const int m = static_cast<int>(state.range(0)), size = static_cast<int>(state.range(1));
  set_onednn_threads(static_cast<int>(state.range(2)));
  W8A8Activations x;
  quantize_activations(activations(m, size), m, size, x);
  std::vector<std::int32_t> acc(static_cast<std::size_t>(m) * size);
  OneDnnInt8Matmul& peer = onednn(m, size);
  for (auto _ : state) {
    peer.run(x.q, acc);
    benchmark::DoNotOptimize(acc.data());
  }
  count_ops(state, m, size);
}

void BM_W8A8OursLinear(benchmark::State& state) {
  const int m = static_cast<int>(state.range(0)), size = static_cast<int>(state.range(1));
  const int threads = static_cast<int>(state.range(2));
  const std::vector<float> x = activations(m, size);
  std::vector<float> y(static_cast<std::size_t>(m) * size);
  W8A8Activations scratch;
  Layer& l = layer(size);
  for (auto _ : state) {
    w8a8_linear(x, m, *l.packed, l.bias, y, scratch, threads);
    benchmark::DoNotOptimize(y.data());
  }
  count_ops(state, m, size);
}

void BM_W8A8Sgemm(benchmark::State& state) {
  const int m = static_cast<int>(state.range(0)), size = static_cast<int>(state.range(1));
  const book::gemm::SgemmThreads scope(static_cast<int>(state.range(2)));
  const std::vector<float> x = activations(m, size);
  std::vector<float> y(static_cast<std::size_t>(m) * size);
  const Layer& l = layer(size);
  using book::gemm::Transpose;
  for (auto _ : state) {
    book::gemm::sgemm(Transpose::kNo, Transpose::kYes, m, size, size, 1.0f, x.data(), size,
                      l.w.data(), size, 0.0f, y.data(), size);
    benchmark::DoNotOptimize(y.data());
  }
  count_ops(state, m, size);
}

void Shapes(benchmark::internal::Benchmark* b) {
  for (const int size : kSizes)
    for (const int m : kTokens)
      for (const int threads : thread_counts()) b->Args({m, size, threads});
}
BENCHMARK(BM_W8A8OursSums)
    ->Apply(Shapes)
    ->ArgNames({"m", "nk", "threads"})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_W8A8OneDnnSums)
    ->Apply(Shapes)
    ->ArgNames({"m", "nk", "threads"})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_W8A8OursLinear)
    ->Apply(Shapes)
    ->ArgNames({"m", "nk", "threads"})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_W8A8Sgemm)
    ->Apply(Shapes)
    ->ArgNames({"m", "nk", "threads"})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// Our sums equal oneDNN's on every shape: a peer that computes something else is no peer.
void check_against_onednn() {
  for (const int size : kSizes)
    for (const int m : kTokens) {
      W8A8Activations x;
      quantize_activations(activations(m, size), m, size, x);
      std::vector<std::int32_t> ours(static_cast<std::size_t>(m) * size), theirs(ours.size());
      w8a8_accumulate(x, *layer(size).packed, ours);
      onednn(m, size).run(x.q, theirs);
      BOOK_CHECK(ours == theirs, "bench_w8a8: our int32 sums differ from oneDNN's at m "
                                     << m << ", n = k " << size);
    }
  std::cout << "checked: our int32 sums equal oneDNN's on every shape\n";
}

// PyTorch's dynamically quantised Linear, per (m, size, threads): the fastest engine's median.
struct TorchResult {
  double ms = 0, spread = 0;
  std::string engine;
};
std::map<std::tuple<int, int, int>, TorchResult> torch_results;
std::string torch_note;

std::optional<fs::path> find_script(const std::string& argv0) {
  const std::string name = "w8a8_torch_peer.py";
  for (const fs::path& p :
       {fs::path("chapters/14_quantization") / name,
        fs::path(argv0 + ".runfiles/llm_infra_book/chapters/14_quantization") / name})
    if (fs::exists(p)) return fs::absolute(p);
  return std::nullopt;
}

void run_torch_peer(const std::string& argv0) {
  const auto script = find_script(argv0);
  if (!script || !fs::exists("/usr/bin/python3")) {
    torch_note = "PyTorch peer not run: w8a8_torch_peer.py or /usr/bin/python3 missing";
    return;
  }
  std::string shapes;
  for (const int size : kSizes)
    for (const int m : kTokens)
      shapes += (shapes.empty() ? "" : ",") + std::to_string(m) + "x" + std::to_string(size) + "x" +
                std::to_string(size);
  for (const int threads : thread_counts()) {
    const std::string command = "GLOG_minloglevel=2 /usr/bin/python3 " + script->string() +
                                " --shapes " + shapes + " --threads " + std::to_string(threads) +
                                " --reps 5 2>/dev/null";
    std::cout << "running the PyTorch peer: " << command << "\n" << std::flush;
    FILE* pipe = popen(command.c_str(), "r");
    if (!pipe) continue;
    char line[1024];
    const std::regex json(
        R"re("m": (\d+), "n": (\d+), "k": \d+, "threads": (\d+), "engine": "([a-z]+)", "ms": ([0-9.eE+-]+), "spread": ([0-9.eE+-]+))re");
    while (std::fgets(line, sizeof line, pipe)) {
      std::cmatch match;
      if (!std::regex_search(line, match, json)) continue;
      TorchResult r{std::stod(match[5]), std::stod(match[6]), match[4]};
      auto& best = torch_results[{std::stoi(match[1]), std::stoi(match[2]), std::stoi(match[3])}];
      if (best.ms == 0 || r.ms < best.ms) best = r;
    }
    pclose(pipe);
  }
  if (torch_results.empty()) torch_note = "PyTorch peer printed nothing (python3-torch missing?)";
}

void print_table(const book::RepetitionReporter& reporter) {
  book::Table table({"m", "n = k", "threads", "ours s32 ms", "spread", "oneDNN s32 ms", "spread",
                     "ours vs oneDNN", "ours linear ms", "spread", "PyTorch dyn. ms (engine)",
                     "ours vs PyTorch", "FP32 sgemm ms", "ours linear vs sgemm"});
  const auto get = [&](const std::string& bench, int m, int size, int threads, double* ms,
                       double* spread) {
    return reporter.summary(bench + "/m:" + std::to_string(m) + "/nk:" + std::to_string(size) +
                                "/threads:" + std::to_string(threads) + "/real_time",
                            ms, spread);
  };
  for (const int size : kSizes)
    for (const int m : kTokens)
      for (const int threads : thread_counts()) {
        double ours = 0, ours_s = 0, dnnl = 0, dnnl_s = 0, lin = 0, lin_s = 0, sg = 0, sg_s = 0;
        if (!get("BM_W8A8OursSums", m, size, threads, &ours, &ours_s)) continue;
        const bool has_dnnl = get("BM_W8A8OneDnnSums", m, size, threads, &dnnl, &dnnl_s);
        const bool has_lin = get("BM_W8A8OursLinear", m, size, threads, &lin, &lin_s);
        const bool has_sg = get("BM_W8A8Sgemm", m, size, threads, &sg, &sg_s);
        const auto t = torch_results.find({m, size, threads});
        const bool has_torch = t != torch_results.end() && has_lin;
        table.add_row(
            {std::to_string(m), std::to_string(size), std::to_string(threads), book::fixed(ours, 3),
             book::spread_text(ours_s), has_dnnl ? book::fixed(dnnl, 3) : "-",
             has_dnnl ? book::spread_text(dnnl_s) : "-",
             has_dnnl ? book::fixed(dnnl / ours, 2) + "x" : "-",
             has_lin ? book::fixed(lin, 3) : "-", has_lin ? book::spread_text(lin_s) : "-",
             has_torch ? book::fixed(t->second.ms, 3) + " (" + t->second.engine + ")" : "-",
             has_torch ? book::fixed(t->second.ms / lin, 2) + "x" : "-",
             has_sg ? book::fixed(sg, 3) : "-",
             has_sg && has_lin ? book::fixed(sg / lin, 2) + "x" : "-"});
      }
  std::cout << "\n" << table.markdown();
  std::cout << "\nours vs X = X's time / ours (above 1: ours is faster). s32: the integer GEMM "
               "alone (s8 x s8 -> exact int32), ours and oneDNN's, medians of interleaved "
               "repetitions. linear: FP32 in -> FP32 out with the activations quantised per call "
               "(ours per token; PyTorch per tensor), PyTorch timed by its own script after ours "
               "(median of 5 repetitions, not interleaved). sgemm: chapter 1's FP32 GEMM, same "
               "shape.\n";
  if (!torch_note.empty()) std::cout << torch_note << "\n";
}

}  // namespace

namespace book::quant::bench_sections {

void w8a8_prologue() {
  std::cout << "W8A8: our kernel: " << w8a8_kernel_name(best_w8a8_kernel()) << "\n"
            << "peer: " << onednn_description() << "\n";
  check_against_onednn();
  const OneDnnInt8Matmul& probe = onednn(64, kSizes[0]);
  std::cout << "oneDNN implementation: " << probe.implementation()
            << (probe.at_best() ? " (its best path here)"
                                : "  WARNING: not its best path; ratios are not results")
            << "\n";
}

void w8a8_report(const RepetitionReporter& reporter, const char* argv0) {
  run_torch_peer(argv0);
  print_table(reporter);
}

}  // namespace book::quant::bench_sections
