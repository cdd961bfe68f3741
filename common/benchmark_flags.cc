#include "common/benchmark_flags.h"

#include <benchmark/benchmark.h>

#include <string>

#include "common/flags.h"
#include "common/machine_load.h"

namespace book {

namespace {
bool listing = false;
}  // namespace

void init_benchmark(int* argc, char** argv) {
  // Google Benchmark keeps its flags private: read this one before it consumes argv.
  for (int i = 1; i < *argc; ++i) {
    const std::string arg = argv[i];
    const std::string flag = "--benchmark_list_tests";
    if (arg == flag) listing = true;
    if (arg.rfind(flag + "=", 0) == 0) {
      const std::string value = arg.substr(flag.size() + 1);
      listing = value == "true" || value == "1" || value == "yes";
    }
  }
  benchmark::Initialize(argc, argv);
  if (*argc > 1)
    throw UsageError("unknown flag " + std::string(argv[1]) +
                     " (a benchmark takes Google Benchmark's flags, e.g. "
                     "--benchmark_filter=REGEX or --benchmark_repetitions=N; --help lists them)");
  print_machine_load();
}

bool benchmark_listing_only() { return listing; }

}  // namespace book
