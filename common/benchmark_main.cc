// main() for a benchmark stage that needs nothing but its registered benchmarks: Google
// Benchmark's flags with the book's defaults (common/bench_args.h: 5 repetitions, run in a random
// interleaved order, so the medians compare like with like on a shared machine), unknown flags
// refused (exit status 2), the machine's load first.
#include <benchmark/benchmark.h>

#include "common/bench_args.h"
#include "common/benchmark_flags.h"
#include "common/main.h"

int main(int argc, char** argv) {
  return book::run_main(argc, argv, [](int argc, char** argv) {
    book::BenchArgs args(argc, argv);
    book::init_benchmark(&args.argc(), args.argv());
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
  });
}
