/// @file
/// The arithmetic of surviving failures: how often to checkpoint (Young's interval, with Daly's
/// refinement), what a given interval costs in expectation (the lost-work model the stage checks
/// against the supervisor's measurement), and, after a failure, which checkpoint to resume from and
/// which steps must be done again (the restart plan the supervisor follows).
///
/// The trade-off in one line: a checkpoint costs δ seconds every τ seconds of work, and a failure
/// throws away on average half an interval (τ/2) of work. Checkpoint often and you pay δ too
/// often; rarely and each failure costs more. With failures every MTBF seconds on average the
/// expected lost time per second of work is δ/τ + τ/(2·MTBF), smallest at τ = √(2·δ·MTBF)
/// (J. W. Young, "A first order approximation to the optimum checkpoint interval", CACM 1974).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace book::prod {

/// Exercise prod.checkpoint_interval: Young's optimum checkpoint interval √(2·δ·MTBF), in seconds
/// of work between checkpoints, for a checkpoint that takes `checkpoint_seconds` (δ) and failures
/// that come every `mtbf_seconds` on average. Throws book::Error, naming the value, if either is
/// not finite or not > 0 (a free checkpoint or a machine that never fails has no optimum).
/// \exercise{prod.checkpoint_interval}
double young_interval(double checkpoint_seconds, double mtbf_seconds);

/// Daly's higher-order refinement of Young's interval (J. T. Daly, "A higher order estimate of the
/// optimum checkpoint interval for restart dumps", FGCS 2006), not an exercise: for δ < 2·MTBF,
/// √(2δM)·(1 + ⅓·√(δ/(2M)) + δ/(18M)) − δ; otherwise MTBF (checkpointing more often than failures
/// come buys nothing). Within a few percent of Young's when δ ≪ MTBF. Same refusals.
double daly_interval(double checkpoint_seconds, double mtbf_seconds);

/// What a run with checkpoints every `interval_seconds` of work is expected to lose.
struct LostWork {
  double checkpoint_seconds = 0;  ///< time spent writing checkpoints: (work / τ)·δ
  double rework_seconds = 0;      ///< work done again: failures × τ/2 on average
  double total() const { return checkpoint_seconds + rework_seconds; }  ///< both together
};

/// The first-order lost-work model (scaffolding for the stage's sweep): `work_seconds` of useful
/// work checkpointed every `interval_seconds`, each checkpoint costing `checkpoint_seconds`, with
/// `failures` failures that strike at uniformly random points of an interval (each loses τ/2 on
/// average). Its minimum over τ is Young's interval with MTBF = work / failures. Throws
/// book::Error for a non-positive or non-finite work, interval or checkpoint time, or a negative
/// failure count.
LostWork expected_lost_work(double work_seconds, double interval_seconds, double checkpoint_seconds,
                            double failures);

/// One checkpoint the supervisor found on disk.
struct CheckpointOnDisk {
  std::int64_t step = 0;  ///< optimizer steps it holds (≥ 1)
  bool verified = false;  ///< it read back whole: magic, size and checksum all good
};

/// Where to resume after a failure, and what that costs.
struct RestartPlan {
  std::int64_t resume_from = 0;  ///< the checkpoint's step to load; 0: start from scratch
  std::int64_t first_redo = 0;   ///< the first step done again (resume_from + 1)
  std::int64_t last_redo = 0;    ///< the last step done again (failed_step − 1); < first: none
  std::int64_t steps_lost = 0;   ///< completed steps thrown away: last_redo − first_redo + 1
};

/// Exercise prod.restart_plan: a failure struck while step `failed_step` ran (steps
/// 1..failed_step − 1 had finished); resume from the newest checkpoint that verified (a newer one
/// that did not verify is skipped: the newest file on disk may be the corrupt one), or from
/// scratch (0) if none did, and redo the completed steps after it. Throws book::Error, before
/// planning, for a failed_step < 1, a checkpoint with step < 1, two checkpoints of the same step,
/// or a checkpoint at or after failed_step (it would hold a step that never finished: the input
/// is inconsistent).
/// \exercise{prod.restart_plan}
RestartPlan restart_plan(std::span<const CheckpointOnDisk> checkpoints, std::int64_t failed_step);

}  // namespace book::prod
