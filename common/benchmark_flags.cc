#include "common/benchmark_flags.h"

#include <benchmark/benchmark.h>

#include <string>

#include "common/flags.h"
#include "common/machine_load.h"

namespace book {

void init_benchmark(int* argc, char** argv) {
  benchmark::Initialize(argc, argv);
  if (*argc > 1)
    throw UsageError("unknown flag " + std::string(argv[1]) +
                     " (a benchmark takes Google Benchmark's flags, e.g. "
                     "--benchmark_filter=REGEX or --benchmark_repetitions=N; --help lists them)");
  print_machine_load();
}

}  // namespace book
