/// @file
/// How busy the machine is when a stage starts. Every stage prints it first, so a number taken
/// while other work ran (a build, another benchmark) says so next to it instead of passing for
/// this machine's speed:
///
/// \code
/// int body(int argc, char** argv) {
///   ... flags.parse(argc, argv);
///   book::print_machine_load();  // "machine: 2 cores; load average 0.12, ...: quiet"
/// \endcode
#pragma once

#include <chrono>
#include <iosfwd>
#include <string>

namespace book {

/// The machine's load at one moment.
struct MachineLoad {
  int cores = 0;              ///< CPUs online
  double load1 = -1;          ///< 1-minute load average (-1: unknown)
  double load5 = -1;          ///< 5-minute load average (-1: unknown)
  double load15 = -1;         ///< 15-minute load average (-1: unknown)
  double busy_fraction = -1;  ///< share of all CPUs' time busy during the sample (-1: unknown)
  double sample_seconds = 0;  ///< how long the sample was
  bool busy = false;          ///< other work used at least kBusyFraction of the CPUs
};

/// Other work using this share of all CPUs or more makes the machine "busy". The sample is
/// taken while the stage sleeps, so every busy cycle in it is someone else's.
inline constexpr double kBusyFraction = 0.25;

/// Reads the load averages and samples the CPUs' busy time for `sample` (the process sleeps
/// meanwhile). On systems without /proc the unknown fields stay -1 and `busy` false.
MachineLoad measure_machine_load(std::chrono::milliseconds sample = std::chrono::milliseconds(250));

/// One line: "machine: 2 cores; load average 9.64, 8.16, 6.11 (1, 5, 15 min); CPUs 97% busy in
/// the 0.25 s before this run: BUSY — ...", or "...: quiet".
std::string describe(const MachineLoad& load);

/// Measures and prints describe() on `out` (std::cout by default), then flushes.
MachineLoad print_machine_load();
/// The same, on `out`.
MachineLoad print_machine_load(std::ostream& out);

/// The share of CPU time that was busy between two readings of /proc/stat's first ("cpu ...")
/// line; -1 if either is not such a line or no time passed. Exposed for its test.
double cpu_busy_fraction(const std::string& stat_before, const std::string& stat_after);

}  // namespace book
