// bazel run -c opt //chapters/14_quantization:gpu_bench   (packed by tools/gpu)
//
// Times the CUDA weight-only GEMV (gemv_cuda.cu) on 32768 outputs × 8192 inputs (FP32 1 GiB, INT4
// 128 MiB: even INT4 is twice an H100/H200's L2) against cuBLAS with FP32 and FP16 weights, at
// m = 1, 4 and 16: INT8 per channel, INT8 g128, INT4 g128 symmetric and asymmetric. Checks every
// kernel against the CPU's QuantizedGemv first. Five rounds, the kernels interleaved within each,
// each round the median of 20 launches; prints the median round and the spread over rounds, GB/s
// of the bytes each reads, and its speed against each cuBLAS peer. Without a GPU it says so and
// exits 0.
#include <algorithm>
#include <cmath>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "chapters/14_quantization/gemv.h"
#include "chapters/14_quantization/gemv_cuda.h"
#include "common/check.h"
#include "common/cuda.h"
#include "common/main.h"
#include "common/rng.h"
#include "common/table.h"
#include "common/timer.h"

namespace {

using namespace book;
using namespace book::quant;

constexpr int kRows = 32768, kCols = 8192, kRounds = 5, kLaunches = 20;

struct Kernel {
  std::string name;
  std::function<double(std::span<const float>, int, std::span<float>, int)> time_ms;
  std::function<std::size_t(int)> bytes;
};

int body(int, char**) {
  if (cuda::device_count() == 0) {
    std::cout << "no GPU: " << cuda::no_device_reason()
              << ". On a GPU machine run tools/gpu/run.sh (tools/gpu/README.md).\n";
    return 0;
  }
  std::cout << cuda::device_summary() << "\n";
  Rng rng(1414);
  std::vector<float> w(static_cast<std::size_t>(kRows) * kCols);
  for (float& v : w) v = static_cast<float>(rng.uniform(-1, 1));
  auto fp32 = std::make_unique<GpuCublasGemv>(w, kRows, kCols, false);
  auto fp16 = std::make_unique<GpuCublasGemv>(w, kRows, kCols, true);
  std::vector<Kernel> kernels{
      {"cuBLAS FP32", [&](auto x, int m, auto y, int r) { return fp32->time_ms(x, m, y, r); },
       [&](int m) { return fp32->bytes_read(m); }},
      {"cuBLAS FP16", [&](auto x, int m, auto y, int r) { return fp16->time_ms(x, m, y, r); },
       [&](int m) { return fp16->bytes_read(m); }}};
  w.clear();
  w.shrink_to_fit();
  const std::vector<std::pair<std::string, Scheme>> schemes{
      {"INT8 per-channel", {Bits::kInt8, Symmetry::kSymmetric, Granularity::kPerChannel, 128}},
      {"INT8 g128", {Bits::kInt8, Symmetry::kSymmetric, Granularity::kGroup, 128}},
      {"INT4 g128", {Bits::kInt4, Symmetry::kSymmetric, Granularity::kGroup, 128}},
      {"INT4 g128 asym", {Bits::kInt4, Symmetry::kAsymmetric, Granularity::kGroup, 128}}};
  std::vector<std::unique_ptr<GpuQuantizedGemv>> gpu;
  std::vector<float> x1(kCols), y_gpu(kRows), y_cpu(kRows);
  for (float& v : x1) v = static_cast<float>(rng.uniform(-1, 1));
  for (const auto& [name, scheme] : schemes) {
    const QuantizedMatrix q = random_quantized_matrix(scheme, kRows, kCols, rng);
    gpu.push_back(std::make_unique<GpuQuantizedGemv>(q));
    gpu.back()->run(x1, 1, y_gpu);
    QuantizedGemv(q).run(x1, 1, y_cpu);
    double worst = 0;
    for (int r = 0; r < kRows; ++r)
      worst = std::max(worst, std::abs(double{y_gpu[r]} - y_cpu[r]) / (1 + std::abs(y_cpu[r])));
    std::cout << name << ": GPU against the CPU's QuantizedGemv, largest |difference| / (1 + |y|) "
              << worst << "\n";
    BOOK_CHECK(worst < 1e-3, name << ": the GPU kernel disagrees with the CPU's (" << worst << ")");
    GpuQuantizedGemv* k = gpu.back().get();
    kernels.push_back({name, [k](auto x, int m, auto y, int r) { return k->time_ms(x, m, y, r); },
                       [k](int m) { return k->bytes_read(m); }});
  }

  Table table({"kernel", "m", "ms (median round)", "spread", "GB/s read", "speed / cuBLAS FP32",
               "speed / cuBLAS FP16"});
  for (const int m : {1, 4, 16}) {
    std::vector<float> x(static_cast<std::size_t>(m) * kCols),
        y(static_cast<std::size_t>(m) * kRows);
    for (float& v : x) v = static_cast<float>(rng.uniform(-1, 1));
    std::map<std::string, std::vector<double>> rounds;
    for (int round = 0; round < kRounds; ++round)
      for (const Kernel& k : kernels) rounds[k.name].push_back(k.time_ms(x, m, y, kLaunches));
    const double fp32_ms = median(rounds["cuBLAS FP32"]), fp16_ms = median(rounds["cuBLAS FP16"]);
    for (const Kernel& k : kernels) {
      const double ms = median(rounds[k.name]);
      table.add_row({k.name, std::to_string(m), fixed(ms, 4),
                     fixed(100 * relative_spread(rounds[k.name]), 0) + "%",
                     fixed(static_cast<double>(k.bytes(m)) / (ms * 1e-3) * 1e-9, 0),
                     fixed(fp32_ms / ms, 2) + "x", fixed(fp16_ms / ms, 2) + "x"});
    }
  }
  std::cout << "\n"
            << kRows << " × " << kCols << " weights; GB/s counts weights + scales + zero "
            << "points + x\n\n"
            << table.markdown();
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return run_main(argc, argv, body); }
