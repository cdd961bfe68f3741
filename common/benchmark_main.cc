// main() for a benchmark stage that needs nothing but its registered benchmarks: Google
// Benchmark's flags, unknown flags refused (exit status 2), the machine's load first.
#include <benchmark/benchmark.h>

#include "common/benchmark_flags.h"
#include "common/main.h"

int main(int argc, char** argv) {
  return book::run_main(argc, argv, [](int argc, char** argv) {
    book::init_benchmark(&argc, argv);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
  });
}
