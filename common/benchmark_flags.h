/// @file
/// The start of every benchmark stage (`bench`): Google Benchmark's flags parsed (`--help` lists
/// them), any other flag refused with exit status 2 instead of being ignored, and the machine's
/// load printed first, so a run on a busy machine says so. In `//common:benchmark_main`, which
/// also provides a main() for benchmarks that need nothing else.
///
/// \code
/// int body(int argc, char** argv) {
///   book::init_benchmark(&argc, argv);
///   ... register, benchmark::RunSpecifiedBenchmarks(&reporter) ...
/// }
/// int main(int argc, char** argv) { return book::run_main(argc, argv, body); }
/// \endcode
#pragma once

namespace book {

/// Calls benchmark::Initialize, then throws book::UsageError naming any argument it did not
/// recognise, then prints the machine's load (book::print_machine_load).
void init_benchmark(int* argc, char** argv);

/// True when init_benchmark() saw --benchmark_list_tests: the bench only lists its benchmarks,
/// so it must skip every measurement of its own (tables, calibration rounds) too.
bool benchmark_listing_only();

}  // namespace book
