/// @file
/// The supervisor: the role of torchrun's elastic agent. It launches a data-parallel job
/// (chapter 5's DdpTrainer on thread ranks), has it checkpoint every K steps into a folder of
/// step-numbered files (keeping the newest few: the newest may be the corrupt one), watches every
/// rank's heartbeat, and when the job fails — a rank killed, a rank hung past the heartbeat
/// timeout, a checkpoint write that fails — tears it down, verifies the checkpoints on disk, asks
/// restart_plan (recovery.h) where to resume, and starts every rank again from there.
///
/// The run is deterministic and a checkpoint holds the data stream's position, so the final
/// weights equal an uninterrupted run's bit for bit: nothing lost, nothing done twice. What a
/// failure costs is counted exactly (the step executions thrown away, which must equal
/// restart_plan's prediction) and timed (detection, restart and load: the down time), into a
/// RunLog (report.h) for uptime and goodput.
///
/// Faults are injected on purpose (tests, the stage, `:supervise`): a kill (the rank throws, as a
/// process dies), a hang (the rank stops beating and waits; the others' collectives time out
/// naming the collective; the supervisor's watchdog sees the stale heartbeat and tears the job
/// down, which ends the hang cooperatively: a thread cannot be killed), a corrupted newest
/// checkpoint (a byte flipped on disk, then a kill), and a full disk (the checkpoint write fails
/// partway through chapter 4's seam, train::fail_next_checkpoint_write_after, and must leave the
/// previous checkpoint intact).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "chapters/05_data_parallel/ddp_options.h"
#include "chapters/15_production_training/recovery.h"
#include "chapters/15_production_training/report.h"

namespace book::prod {

/// The kinds of failure the supervisor can inject.
enum class FaultKind {
  kKill,           ///< the rank dies at the start of the step
  kHang,           ///< the rank stops at the start of the step, beating no more, until torn down
  kCorruptNewest,  ///< a byte of the newest checkpoint on disk flips, then the rank dies
  kDiskFull,       ///< the first checkpoint written at or after the step fails partway
};

/// "kill", "hang", "corrupt", "disk-full".
const char* fault_name(FaultKind kind);
/// Parses a fault_name; throws book::Error listing the kinds otherwise.
FaultKind parse_fault(const std::string& text);

/// One injected failure. Each strikes once: the run after the restart goes through its step.
struct Fault {
  FaultKind kind = FaultKind::kKill;  ///< what happens
  std::int64_t step = 1;              ///< the step (1-based) at whose start it strikes
  int rank = 0;                       ///< the rank it strikes (kill, hang; the others: any)
};

/// `count` faults drawn from `seed`: distinct steps in [2, steps], ranks in [0, ranks), kinds
/// taken in turn from `kinds`. Throws book::Error if the steps cannot hold `count` faults or
/// `kinds` is empty.
std::vector<Fault> seeded_faults(std::uint64_t seed, int count, std::int64_t steps, int ranks,
                                 const std::vector<FaultKind>& kinds);

/// A supervised run.
struct SupervisorOptions {
  std::string name = "supervised";    ///< the RunLog's name
  ddp::DdpOptions ddp;                ///< the run every attempt trains (chapter 5)
  int ranks = 2;                      ///< thread ranks
  std::int64_t steps = 20;            ///< optimizer steps to finish
  std::int64_t checkpoint_every = 5;  ///< K: a checkpoint after every K steps
  int keep_checkpoints = 2;           ///< the newest this many are kept, older ones removed
  std::string checkpoint_dir;         ///< created if missing; old step-*.ckpt files are removed
  int max_restarts = 5;               ///< restarts allowed before the supervisor gives up
  /// A rank that has not finished a step (or a checkpoint) for this long is declared hung; also
  /// the ranks' collective timeout. Must exceed one step: checked against the first step.
  double heartbeat_timeout_s = 10;
  std::vector<Fault> faults;  ///< what to inject (none: a clean run)
  /// The trainer: chapter 5's DDP (false), or chapter 6's ZeRO-1 (true), whose checkpoint is a
  /// folder of optimizer-state shards that any number of ranks can load (reshard).
  bool zero = false;
  /// Ranks after the first failure (0: the same): the lost node is not replaced and the job goes
  /// on smaller, loading the checkpoint on fewer ranks. A fault on a rank that no longer exists
  /// does not strike. The final weights then differ from an N-rank run's in the last bits (the
  /// gradient is summed in another order), as any change of N does.
  int restart_ranks = 0;
  /// Slower storage on purpose: rank 0 sleeps this long in each checkpoint write (the others wait
  /// in its barrier), as a large model's write to a parallel filesystem takes many steps' time.
  /// The stage's interval sweep uses it to put the optimum inside the swept range. 0: none.
  double checkpoint_delay_s = 0;
  /// Soak mode: end the run at the first checkpoint after this many wall seconds, even before
  /// `steps` (0: run every step). The ranks agree by an all-reduce (max) after each checkpoint.
  double stop_after_s = 0;
  /// Called on rank 0's thread with a one-line summary at most every progress_every_s seconds
  /// (empty: silent).
  std::function<void(const std::string&)> progress;
  double progress_every_s = 10;  ///< see progress
};

/// One execution of one step on rank 0 (a step done twice appears twice).
struct StepExecution {
  int attempt = 0;        ///< 0 for the first launch, k after the k-th restart
  std::int64_t step = 0;  ///< 1-based
  double start_s = 0;     ///< since the job's start
  double end_s = 0;       ///< since the job's start
  bool redone = false;    ///< the step had been completed before (its work was thrown away)
};

/// One checkpoint write that succeeded.
struct CheckpointWrite {
  std::int64_t step = 0;  ///< steps it holds
  double start_s = 0;     ///< since the job's start
  double end_s = 0;       ///< since the job's start
};

/// One failure and the restart after it.
struct FailureRecord {
  std::string cause;        ///< what struck: the injected fault, or the first error
  std::string detected_by;  ///< what noticed it: the error, a collective's timeout, the watchdog
  std::string error;        ///< the error the job ended with (run_ranks' first)
  std::int64_t failed_step = 0;          ///< the step that did not finish
  RestartPlan plan;                      ///< restart_plan's answer: where it resumed, what it redid
  std::vector<std::int64_t> unverified;  ///< checkpoints that did not verify (set aside)
  double failed_s = 0;                   ///< since the job's start: the moment the failure struck
  double detected_s = 0;                 ///< when the supervisor knew (an error, or the watchdog)
  double resumed_s = 0;  ///< when the next attempt's first step began (after the load)
};

/// What the supervisor reports.
struct SupervisedRun {
  RunLog log;                             ///< for summarize(): steps, wall, down, restarts, redone
  std::vector<float> final_weights;       ///< rank 0's FP32 weights after the last step
  std::vector<FailureRecord> failures;    ///< in order
  std::vector<StepExecution> executions;  ///< every step execution, in order (the timeline)
  std::vector<CheckpointWrite> checkpoints;  ///< every checkpoint that was written
  std::int64_t predicted_redone = 0;         ///< Σ restart_plan's steps_lost over the failures
  double redone_seconds = 0;                 ///< time of the executions thrown away
  double checkpoint_seconds = 0;             ///< time spent writing checkpoints
};

/// The watchdog's verdict from every rank's completed steps `done`: "hung: no heartbeat for 3 s;
/// ranks 0, 1 stopped after step 9". A rank blocked in a collective on a hung one stops beating
/// too, so every rank that stopped at the lowest step is named: heartbeats alone cannot tell
/// which of them hung first.
std::string hang_verdict(double timeout_s, const std::vector<std::int64_t>& done);

/// The refusals supervise() makes before training (see supervise), for any supervisor.
void check_supervisor_options(const SupervisorOptions& options);

/// Runs SupervisorOptions::steps steps on thread ranks under supervision, injecting the faults.
/// Refuses, before training, a checkpoint folder it cannot write, K < 1, keep_checkpoints < 1,
/// steps < 1, max_restarts < 0, a heartbeat timeout ≤ 0, and a fault outside [1, steps] or on a
/// rank that does not exist (a disk-full fault also needs a checkpoint at or after its step); after
/// the first step, a heartbeat timeout shorter than that step. Throws book::Error naming the last
/// failure when more than max_restarts restarts would be needed.
SupervisedRun supervise(const SupervisorOptions& options);

}  // namespace book::prod
