// Google Benchmark: every rung and cuBLAS on the same square problems, timed with CUDA events
// (manual time: the GPU's time, not the host's), FLOP/s as a counter, then each rung as a ratio
// to its cuBLAS peer (FP32 rungs to SGEMM, BF16 rungs to cublasGemmEx BF16) from this same run.
// Without a GPU every benchmark is skipped with the reason.
//
//   bazel run -c opt //chapters/02_gemm_cuda:bench
//   bazel run -c opt //chapters/02_gemm_cuda:bench -- --benchmark_filter='warptile|cublas'
#include <benchmark/benchmark.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "chapters/02_gemm_cuda/runners.h"
#include "common/benchmark_flags.h"
#include "common/cuda.h"
#include "common/flags.h"
#include "common/main.h"
#include "common/table.h"

namespace book::gemm_cuda {
namespace {

std::map<std::string, double> seconds_by_name;  // "rung/size" -> mean seconds per GEMM

void run_rung(benchmark::State& state, const std::string& name) {
  if (cuda::device_count() == 0) {
    state.SkipWithError(("needs a GPU: " + cuda::no_device_reason()).c_str());
    return;
  }
  static Cublas cublas;
  Rung rung;
  for (const Rung& r : ladder_rungs(cublas))
    if (r.name == name) rung = r;
  if (const std::string why = unavailable_reason(rung); !why.empty()) {
    state.SkipWithError(why.c_str());
    return;
  }
  const int n = static_cast<int>(state.range(0));
  const GemmShape s{n, n, n};
  const DeviceProblem inputs(random_problem(s, n));
  cuda::DeviceBuffer<float> c(std::size_t(n) * n);
  auto once = [&] {
    rung.run(inputs.a_for(rung.input), inputs.b_for(rung.input), c.data(), s, nullptr);
  };
  try {
    once();  // warm-up, and the stub check
    BOOK_CUDA_CHECK(cudaDeviceSynchronize());
  } catch (const NotImplemented& not_started) {
    state.SkipWithError(not_started.what());
    return;
  }
  cudaEvent_t start, stop;
  BOOK_CUDA_CHECK(cudaEventCreate(&start));
  BOOK_CUDA_CHECK(cudaEventCreate(&stop));
  double total = 0;
  for (auto _ : state) {
    BOOK_CUDA_CHECK(cudaEventRecord(start));
    once();
    BOOK_CUDA_CHECK(cudaEventRecord(stop));
    BOOK_CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    BOOK_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    state.SetIterationTime(ms * 1e-3);
    total += ms * 1e-3;
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  seconds_by_name[name + "/" + std::to_string(n)] = total / double(state.iterations());
  state.counters["FLOP/s"] =
      benchmark::Counter(2.0 * n * double(n) * n, benchmark::Counter::kIsIterationInvariantRate);
}

const char* kNames[] = {"cublas_sgemm", "cublas_bf16",  "naive",        "coalesced",
                        "shared_tile",  "blocktile_1d", "register_2d",  "vectorised",
                        "warptile",     "wmma_bf16",    "mma_cp_async", "wgmma_tma"};

// --skip=NAME,... (what tools/gpu/run.sh passes when a rung's test failed): those rungs are not
// registered. Unknown names are a usage error.
std::vector<std::string> parse_skip(const std::string& list) {
  std::vector<std::string> skip;
  for (std::size_t at = 0; at <= list.size();) {
    const std::size_t comma = std::min(list.find(',', at), list.size());
    const std::string name = list.substr(at, comma - at);
    bool known = false;
    for (const char* valid : kNames) known = known || name == valid;
    if (!known) throw UsageError("--skip: there is no rung named '" + name + "'");
    skip.push_back(name);
    at = comma + 1;
  }
  return skip;
}

void register_all(const std::vector<std::string>& skip) {
  for (const char* name : kNames) {
    if (std::find(skip.begin(), skip.end(), name) != skip.end()) continue;
    auto* b = benchmark::RegisterBenchmark(
        name, [name](benchmark::State& state) { run_rung(state, name); });
    b->UseManualTime()->Unit(benchmark::kMillisecond)->Arg(1024)->Arg(4096);
  }
}

void print_ratios() {
  if (seconds_by_name.empty()) return;
  Table table({"rung", "size", "vs its cuBLAS peer"});
  for (const auto& [key, seconds] : seconds_by_name) {
    const std::string name = key.substr(0, key.find('/')), size = key.substr(key.find('/') + 1);
    const bool bf16 = name == "cublas_bf16" || name == "wmma_bf16" || name == "mma_cp_async" ||
                      name == "wgmma_tma";
    const auto peer = seconds_by_name.find((bf16 ? "cublas_bf16/" : "cublas_sgemm/") + size);
    if (peer == seconds_by_name.end()) continue;
    table.add_row({name, size, fixed(peer->second / seconds, 2) + "x"});
  }
  std::cout << "\n" << table.markdown();
}

// --tour (what tools/gpu/run.sh passes every stage in its quick mode): only the 4096 runs.
// --skip=NAME,...: leave those rungs out. The other flags are Google Benchmark's own (--help
// lists them).
int body(int argc, char** argv) {
  std::vector<char*> args;
  std::vector<std::string> skip;
  std::string tour_filter = "--benchmark_filter=/4096/";
  for (int i = 0; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--skip=", 0) == 0)
      skip = parse_skip(arg.substr(7));
    else
      args.push_back(arg == "--tour" ? tour_filter.data() : argv[i]);
  }
  argc = static_cast<int>(args.size());
  argv = args.data();
  init_benchmark(&argc, argv);  // refuses unknown flags; prints the machine's load
  register_all(skip);
  benchmark::RunSpecifiedBenchmarks();
  print_ratios();
  return 0;
}

}  // namespace
}  // namespace book::gemm_cuda

int main(int argc, char** argv) { return book::run_main(argc, argv, book::gemm_cuda::body); }
