// bazel run -c opt //chapters/14_quantization:bench — the chapter's kernels against their peers
// in one run: weight-only INT8/INT4 GEMV against our FP32 GEMV, chapter 1's sgemm and OpenBLAS,
// in GB/s of the bytes read (bench_gemv.cc); the W8A8 INT8 GEMM against oneDNN's int8 matmul,
// PyTorch's dynamically quantised Linear and sgemm (bench_w8a8.cc). Medians of 5 repetitions of
// every benchmark run in one random interleaved order (common/bench_args.h); --benchmark_filter
// picks a section (e.g. --benchmark_filter=W8A8 or =Gemv).
#include <benchmark/benchmark.h>

#include <iostream>

#include "chapters/14_quantization/bench_sections.h"
#include "common/bench_args.h"
#include "common/benchmark_flags.h"
#include "common/cpu.h"
#include "common/main.h"
#include "common/peers.h"

namespace {

int bench_main(int argc, char** argv) {
  book::BenchArgs args(argc, argv);  // 5 repetitions, randomly interleaved, unless told otherwise
  book::init_benchmark(&args.argc(), args.argv());  // unknown flags refused; the machine's load
  namespace s = book::quant::bench_sections;
  const bool timing = !book::benchmark_listing_only();
  if (timing) {
    std::cout << "CPU: " << book::cpu_model() << "\n";
    s::gemv_prologue();
    s::w8a8_prologue();
  }
  book::RepetitionReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  if (timing) {
    s::gemv_report(reporter);
    s::w8a8_report(reporter, argv[0]);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  book::peers::use_peers_at_their_best(argc, argv);  // OpenBLAS's core (may restart once)
  return book::run_main(argc, argv, bench_main);
}
