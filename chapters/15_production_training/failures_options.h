/// @file
/// The command line of a supervised run, shared by the production stage's "Surviving failures"
/// section (flags prefixed `sup-`) and the `:supervise` binary (no prefix): the model, the ranks,
/// the steps, the checkpoint interval, the heartbeat timeout, the faults to inject, and the
/// checkpoint-interval sweep.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "chapters/15_production_training/supervisor.h"
#include "common/flags.h"

namespace book::prod {

/// What the "Surviving failures" section (and `:supervise`) runs.
struct FailuresOptions {
  int ranks = 2;            ///< thread ranks
  std::int64_t steps = 60;  ///< optimizer steps of the supervised run
  std::int64_t every = 5;   ///< K: a checkpoint every K steps
  int keep = 2;             ///< checkpoints kept
  int faults = 4;           ///< injected failures (kinds in turn from `kinds`)
  std::vector<std::string> kinds = {"kill", "hang", "corrupt", "disk-full"};  ///< fault kinds
  std::int64_t seed = 15;           ///< the failure schedule's seed
  bool zero = false;                ///< train with chapter 6's ZeRO-1 instead of chapter 5's DDP
  int restart_ranks = 0;            ///< ranks after the first failure (0: the same)
  int max_restarts = 10;            ///< restarts before giving up
  double heartbeat_s = 1.0;         ///< heartbeat timeout, seconds (a hang costs this much)
  int layers = 2;                   ///< transformer blocks
  int d_model = 64;                 ///< model width
  int heads = 4;                    ///< attention heads
  int micro_batch = 16;             ///< global micro-batch, sequences
  std::int64_t process_steps = 24;  ///< steps of the MPI-process job (0: no process job)
  std::string dir;                  ///< checkpoint folder (default: `<results>/ch15_checkpoints`)
  std::vector<std::int64_t> sweep = {2, 4, 8, 16, 32};  ///< intervals K of the sweep (empty: none)
  std::int64_t sweep_steps = 96;                        ///< steps of each sweep run
  int sweep_faults = 4;         ///< kills per sweep run (a repetition: one schedule for every K)
  double sweep_delay_ms = 100;  ///< each sweep checkpoint's added write time (slower storage)
  int sweep_repeats = 3;        ///< runs per K, interleaved, each its own seeded schedule (mean)
  double hours = 0;             ///< soak mode (`:supervise`): run this long (0: `steps` steps)
  double progress_s = 60;       ///< `:supervise`: a progress line at most this often, seconds
};

/// Adds the flags, each named `prefix` + its name ("sup-steps" or "steps").
void add_failures_flags(Flags& flags, FailuresOptions* options, const std::string& prefix);

/// After parsing: --tour shortens what the user did not set (fewer steps, a shorter sweep).
void shorten_for_tour(const Flags& flags, FailuresOptions* options, const std::string& prefix);

/// The supervisor's options for `options` (checkpoints in `options.dir`, or `default_dir`),
/// with the seeded faults.
SupervisorOptions supervisor_options(const FailuresOptions& options,
                                     const std::string& default_dir);

/// The failures of `run`, one row each (what struck, where, what noticed it, how fast, where it
/// resumed, the steps redone, the down time), printed and written to `<results>/<stem>.csv`.
void print_failures(const SupervisedRun& run, const std::string& stem);

/// One line saying what ran: model, ranks, steps, K, faults.
std::string describe(const FailuresOptions& options);

}  // namespace book::prod
