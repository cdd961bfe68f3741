/// @file
/// The supervisor for a job of MPI processes: it forks and execs `mpirun ... train_worker` (in a
/// process group of its own), watches the job's exit and every rank's heartbeat file, and on a
/// failure — a rank killed (mpirun reports it and ends the job), a rank hung past the heartbeat
/// timeout (the supervisor SIGKILLs the process group; each worker also dies with mpirun through
/// PR_SET_PDEATHSIG), a checkpoint write that fails — verifies the checkpoints on disk, asks
/// restart_plan where to resume, and launches the job again. What torchrun's elastic agent does
/// for processes, and what a shell loop around mpirun does on a cluster.
///
/// It reports what the thread supervisor reports (supervisor.h's SupervisedRun), from the
/// worker's step log and final weights, so the same proofs apply: the final weights equal an
/// uninterrupted run's bit for bit, and the steps redone equal restart_plan's prediction.
#pragma once

#include <string>
#include <vector>

#include "chapters/15_production_training/supervisor.h"
#include "chapters/15_production_training/worker_options.h"

namespace book::prod {

/// A job of MPI processes under supervision.
struct ProcessSupervisorOptions {
  std::string name = "supervised (MPI processes)";  ///< the RunLog's name
  std::string worker;                               ///< path of the `:train_worker` binary
  /// The launcher and its options; the supervisor adds `-np <ranks> <worker> <flags>`.
  std::vector<std::string> launcher = {"mpirun", "--allow-run-as-root", "--oversubscribe"};
  int ranks = 2;  ///< processes
  /// The run: steps, checkpoint interval, kept checkpoints, folder, model (the supervisor sets
  /// resume_from, attempt and the fault of each launch).
  WorkerOptions job;
  int max_restarts = 5;             ///< restarts before giving up
  double heartbeat_timeout_s = 10;  ///< a rank silent this long (after its first beat) is hung
  std::vector<Fault> faults;        ///< injected in step order, one per launch
};

/// Runs the job to job.steps under supervision. Refuses, before launching, what supervise()
/// refuses (an unwritable folder, K < 1, a heartbeat timeout ≤ 0, faults outside the run), a
/// worker that is not an executable file, and more than max_restarts restarts (naming the last
/// failure and the tail of mpirun's output, kept in `<dir>/attempt-<k>.log`).
SupervisedRun supervise_processes(const ProcessSupervisorOptions& options);

}  // namespace book::prod
