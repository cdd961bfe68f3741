/// @file
/// The "Surviving failures" section's second half: the checkpoint-interval sweep (stage_sweep.cc),
/// which run_failures_section (stage_failures.cc) calls and summarises in its tour line.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "chapters/15_production_training/failures_options.h"
#include "chapters/15_production_training/report.h"

namespace book::prod::stage {

/// What the sweep found.
struct SweepResult {
  std::string intervals;           ///< the K swept, "2, 4, 8"
  std::int64_t measured_best = 0;  ///< the K with the least measured lost work
  double young_steps = 0;  ///< Young's √(2·δ·MTBF) in steps, from the measured δ and step
  double daly_steps = 0;   ///< Daly's refinement, in steps
};

/// For each K of options.sweep (interleaved, options.sweep_repeats times), a supervised run of
/// sweep_steps steps with the same seeded kills; prints measured lost work (redone steps' time +
/// checkpoint time) against the model's (recovery.h) and both optima; writes
/// results/ch15_sweep.csv. Returns an empty result when the sweep is empty.
SweepResult run_interval_sweep(const FailuresOptions& options);

/// The same seeded failures on a job of MPI processes (`mpirun train_worker`, stage_processes.cc)
/// against an uninterrupted job; prints its failures and the bit-for-bit check (and with `tour`
/// its tour line). Returns the two jobs' logs, or none (saying why) without mpirun or the worker.
std::vector<RunLog> run_process_demo(const FailuresOptions& options, bool tour);

}  // namespace book::prod::stage
