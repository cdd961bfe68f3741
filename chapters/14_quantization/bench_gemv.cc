// The benchmark's weight-only GEMV section (bench_main.cc runs it; bench_sections.h).
//
// Weight-only GEMV against FP32 on a matrix far larger than the last-level cache: 16384 outputs ×
// 8192 inputs (FP32 512 MiB, INT8 128 MiB, INT4 64 MiB: even INT4 is twice a 32 MiB L3), so
// every kernel streams its weights from memory. Our FP32 GEMV (written like the quantised ones),
// chapter 1's sgemm at m rows, OpenBLAS (sgemv at m = 1, sgemm above; common/peers.h), INT8 per
// channel, INT8 g128, INT4 g128 symmetric and asymmetric (gemv.h), at m = 1 on one thread and on
// every thread, and m = 4 and 16 on every thread. Each is reported as GB/s of the bytes it reads
// (weights, scales, zero points, x) and as a fraction of the machine's read-only bandwidth
// (chapter 1's measure_read_bandwidth_gbs, same threads), and as speed against our FP32 GEMV.
// Medians of 5 repetitions run in a random interleaved order (common/bench_args.h). The
// quantised matrices are random integers and scales of each scheme (a kernel's time does not
// depend on the values; the tests check the values).
#include <benchmark/benchmark.h>
#include <cblas.h>
#include <sys/mman.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "chapters/01_gemm_cpu/peak.h"
#include "chapters/01_gemm_cpu/sgemm.h"
#include "chapters/14_quantization/bench_sections.h"
#include "chapters/14_quantization/gemv.h"
#include "common/bench_args.h"
#include "common/benchmark_flags.h"
#include "common/buffer.h"
#include "common/cpu.h"
#include "common/main.h"
#include "common/peers.h"
#include "common/repetition_reporter.h"
#include "common/rng.h"
#include "common/table.h"
#include "common/timer.h"

namespace {

using namespace book;
using namespace book::quant;

constexpr int kRows = 16384, kCols = 8192;
constexpr std::size_t kHugePage = std::size_t{2} << 20;

int hardware_threads() {
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

// The FP32 weights, on 2 MiB pages like the quantised ones (gemv.h).
const AlignedBuffer<float, kHugePage>& fp32_weights() {
  static const AlignedBuffer<float, kHugePage> w = [] {
    AlignedBuffer<float, kHugePage> buffer(static_cast<std::size_t>(kRows) * kCols);
    madvise(buffer.data(), buffer.size() * sizeof(float), MADV_HUGEPAGE);
    Rng rng(14);
    fill_uniform<float>(buffer.span(), rng);
    return buffer;
  }();
  return w;
}

// A random matrix of `scheme` (quant.h's random_quantized_matrix: a kernel's time does not depend
// on the values; the tests check the values).
QuantizedMatrix random_matrix(const Scheme& scheme) {
  Rng rng(static_cast<std::uint64_t>(scheme.group_size) * 16 + static_cast<int>(scheme.bits));
  return random_quantized_matrix(scheme, kRows, kCols, rng);
}

enum Kind { kInt8PerChannel, kInt8G128, kInt4G128, kInt4G128Asym, kKinds };

Scheme scheme_of(Kind kind) {
  switch (kind) {
    case kInt8PerChannel:
      return {Bits::kInt8, Symmetry::kSymmetric, Granularity::kPerChannel, 128};
    case kInt8G128:
      return {Bits::kInt8, Symmetry::kSymmetric, Granularity::kGroup, 128};
    case kInt4G128:
      return {Bits::kInt4, Symmetry::kSymmetric, Granularity::kGroup, 128};
    default:
      return {Bits::kInt4, Symmetry::kAsymmetric, Granularity::kGroup, 128};
  }
}

QuantizedGemv& quantized(Kind kind) {
  static std::map<Kind, std::unique_ptr<QuantizedGemv>> made;
  auto& slot = made[kind];
  if (!slot) slot = std::make_unique<QuantizedGemv>(random_matrix(scheme_of(kind)));
  return *slot;
}

Fp32Gemv& ours_fp32() {
  static Fp32Gemv gemv(fp32_weights().span(), kRows, kCols);
  return gemv;
}

// Runs `call` on fresh random x rows; counts `bytes` read per call as the GB/s counter.
template <typename Call>
void run(benchmark::State& state, std::size_t bytes, Call call) {
  const int m = static_cast<int>(state.range(0));
  Rng rng(m);
  std::vector<float> x(static_cast<std::size_t>(m) * kCols), y(static_cast<std::size_t>(m) * kRows);
  fill_uniform<float>(std::span<float>(x), rng);
  call(m, x.data(), y.data());  // warm-up
  for (auto _ : state) {
    call(m, x.data(), y.data());
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  state.counters["B/s"] =
      benchmark::Counter(static_cast<double>(bytes), benchmark::Counter::kIsIterationInvariantRate);
}

std::size_t fp32_bytes(int m) { return (static_cast<std::size_t>(kRows) + m) * kCols * 4; }

void BM_GemvFp32Ours(benchmark::State& state) {
  Fp32Gemv& gemv = ours_fp32();
  gemv.set_threads(static_cast<int>(state.range(1)));
  run(state, gemv.bytes_read(static_cast<int>(state.range(0))), [&](int m, float* x, float* y) {
    gemv.run({x, static_cast<std::size_t>(m) * kCols}, m, {y, static_cast<std::size_t>(m) * kRows});
  });
}

// Chapter 1's sgemm: y[m][rows] = x[m][cols] · Wᵀ.
void BM_GemvFp32Sgemm(benchmark::State& state) {
  const gemm::SgemmThreads scope(static_cast<int>(state.range(1)));
  const float* w = fp32_weights().data();
  run(state, fp32_bytes(static_cast<int>(state.range(0))), [&](int m, float* x, float* y) {
    gemm::sgemm(gemm::Transpose::kNo, gemm::Transpose::kYes, m, kRows, kCols, 1.0f, x, kCols, w,
                kCols, 0.0f, y, kRows);
  });
}

// OpenBLAS at its best: sgemv for one row, sgemm for several.
void BM_GemvFp32OpenBlas(benchmark::State& state) {
  peers::set_openblas_threads(static_cast<int>(state.range(1)));
  const float* w = fp32_weights().data();
  run(state, fp32_bytes(static_cast<int>(state.range(0))), [&](int m, float* x, float* y) {
    if (m == 1)
      cblas_sgemv(CblasRowMajor, CblasNoTrans, kRows, kCols, 1.0f, w, kCols, x, 1, 0.0f, y, 1);
    else
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, kRows, kCols, 1.0f, x, kCols, w,
                  kCols, 0.0f, y, kRows);
  });
}

void BM_GemvQuantized(benchmark::State& state, Kind kind) {
  QuantizedGemv& gemv = quantized(kind);
  gemv.set_threads(static_cast<int>(state.range(1)));
  run(state, gemv.bytes_read(static_cast<int>(state.range(0))), [&](int m, float* x, float* y) {
    gemv.run({x, static_cast<std::size_t>(m) * kCols}, m, {y, static_cast<std::size_t>(m) * kRows});
  });
}

// (m, threads): m = 1 on one thread and on all, m = 4 and 16 on all.
void shapes(benchmark::internal::Benchmark* b) {
  const int all = hardware_threads();
  b->ArgNames({"m", "threads"});
  if (all > 1) b->Args({1, 1});
  for (const int m : {1, 4, 16}) b->Args({m, all});
  b->UseRealTime()->Unit(benchmark::kMillisecond);
}

BENCHMARK(BM_GemvFp32Ours)->Apply(shapes);
BENCHMARK(BM_GemvFp32Sgemm)->Apply(shapes);
BENCHMARK(BM_GemvFp32OpenBlas)->Apply(shapes);
BENCHMARK_CAPTURE(BM_GemvQuantized, int8_per_channel, kInt8PerChannel)->Apply(shapes);
BENCHMARK_CAPTURE(BM_GemvQuantized, int8_g128, kInt8G128)->Apply(shapes);
BENCHMARK_CAPTURE(BM_GemvQuantized, int4_g128, kInt4G128)->Apply(shapes);
BENCHMARK_CAPTURE(BM_GemvQuantized, int4_g128_asym, kInt4G128Asym)->Apply(shapes);

struct Row {
  std::string label, name;  // the table's label, the benchmark's name before "/m:"
  std::size_t (*bytes)(int m);
};

std::size_t quantized_bytes(Kind kind, int m) { return quantized(kind).bytes_read(m); }

const std::vector<Row>& rows() {
  static const std::vector<Row> all{
      {"FP32 ours", "BM_GemvFp32Ours", fp32_bytes},
      {"FP32 chapter 1 sgemm", "BM_GemvFp32Sgemm", fp32_bytes},
      {"FP32 OpenBLAS", "BM_GemvFp32OpenBlas", fp32_bytes},
      {"INT8 per-channel", "BM_GemvQuantized/int8_per_channel",
       [](int m) { return quantized_bytes(kInt8PerChannel, m); }},
      {"INT8 g128", "BM_GemvQuantized/int8_g128",
       [](int m) { return quantized_bytes(kInt8G128, m); }},
      {"INT4 g128", "BM_GemvQuantized/int4_g128",
       [](int m) { return quantized_bytes(kInt4G128, m); }},
      {"INT4 g128 asym", "BM_GemvQuantized/int4_g128_asym",
       [](int m) { return quantized_bytes(kInt4G128Asym, m); }},
  };
  return all;
}

std::string key(const Row& row, int m, int threads) {
  return row.name + "/m:" + std::to_string(m) + "/threads:" + std::to_string(threads) +
         "/real_time";
}

// The table after Google Benchmark's output: per (m, threads), each kernel's median, spread,
// GB/s of the bytes it reads, fraction of the read bandwidth, speed against our FP32 GEMV.
void report(const RepetitionReporter& reporter, const std::map<int, double>& read_gbs) {
  Table table({"kernel", "m", "threads", "ms (median)", "spread", "GB/s read",
               "% of read bandwidth", "speed / FP32 ours"});
  std::vector<std::pair<int, int>> cases;
  const int all = hardware_threads();
  if (all > 1) cases.emplace_back(1, 1);
  for (const int m : {1, 4, 16}) cases.emplace_back(m, all);
  std::vector<std::string> targets;
  for (const auto& [m, threads] : cases) {
    double fp32_ms = 0, spread = 0;
    const bool have_fp32 = reporter.summary(key(rows()[0], m, threads), &fp32_ms, &spread);
    for (const Row& row : rows()) {
      double ms = 0;
      if (!reporter.summary(key(row, m, threads), &ms, &spread)) continue;
      const double gbs = static_cast<double>(row.bytes(m)) / (ms * 1e-3) * 1e-9;
      const double fraction = gbs / read_gbs.at(threads);
      const double speed = have_fp32 ? fp32_ms / ms : 0;
      table.add_row({row.label, std::to_string(m), std::to_string(threads), fixed(ms, 2),
                     spread < 0 ? "?" : fixed(100 * spread, 0) + "%", fixed(gbs, 1),
                     fixed(100 * fraction, 0) + "%", have_fp32 ? fixed(speed, 2) + "x" : "-"});
      const bool int8 = row.label == "INT8 per-channel", int4 = row.label == "INT4 g128";
      if (m == 1 && threads == all && have_fp32 && (int8 || int4))
        targets.push_back(row.label + ": " + fixed(speed, 2) +
                          "x our FP32 GEMV (target >= " + (int8 ? "1.8" : "3") + "x), " +
                          fixed(100 * fraction, 0) + "% of the read bandwidth (target >= 70%)");
    }
  }
  std::cout << "\n"
            << kRows << " × " << kCols << " weights (FP32 " << fp32_bytes(0) / (1 << 20)
            << " MiB); kernel path " << gemv_path_name(best_gemv_path()) << " on " << cpu_model()
            << "; GB/s counts weights + scales + zero points + x; medians "
               "of the repetitions, spread = (slowest − fastest) / median\nread-only bandwidth "
               "(chapter 1's measure_read_bandwidth_gbs, best of 5 passes): ";
  for (const auto& [threads, gbs] : read_gbs)
    std::cout << fixed(gbs, 1) << " GB/s on " << threads << " thread(s)  ";
  std::cout << "\n" << peers::not_at_best_warning() << "\n" << table.markdown() << "\n";
  for (const std::string& line : targets) std::cout << line << "\n";
}

}  // namespace

namespace book::quant::bench_sections {

namespace {
std::map<int, double> read_gbs;  // the read bandwidth per thread count, measured by the prologue
}  // namespace

void gemv_prologue() {
  std::cout << "peers: " << peers::openblas_description() << "\n";
  read_gbs[1] = gemm::measure_read_bandwidth_gbs(1);
  read_gbs[hardware_threads()] = gemm::measure_read_bandwidth_gbs(hardware_threads());
  std::cout << "triad (chapter 1, for comparison): "
            << fixed(gemm::measure_triad_bandwidth_gbs(hardware_threads()), 1) << " GB/s on "
            << hardware_threads() << " thread(s)\n";
}

void gemv_report(const RepetitionReporter& reporter) { report(reporter, read_gbs); }

}  // namespace book::quant::bench_sections
