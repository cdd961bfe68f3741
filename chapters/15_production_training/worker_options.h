/// @file
/// What one launch of `:train_worker` (the training job as MPI processes) is told, and how the
/// process supervisor (process_supervisor.h) says it on the worker's command line: the model, the
/// steps, the checkpoint folder and interval, where to resume, and at most one fault to inject.
/// One struct, one flag list, one function that writes the flags: the two sides cannot drift.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "chapters/05_data_parallel/ddp_options.h"
#include "common/flags.h"

namespace book::prod {

/// One launch of the worker, as every rank sees it.
struct WorkerOptions {
  std::int64_t steps = 20;       ///< train until this many steps are done
  std::int64_t every = 5;        ///< a checkpoint after every this many steps
  int keep = 2;                  ///< checkpoints kept (rank 0 removes older ones)
  std::string dir;               ///< checkpoints, heartbeats, the step log, the final weights
  std::int64_t resume_from = 0;  ///< the checkpoint's step to load first (0: from scratch)
  int attempt = 0;               ///< which launch this is (0: the first), for the step log
  int layers = 2;                ///< transformer blocks
  int d_model = 32;              ///< model width
  int heads = 2;                 ///< attention heads
  int micro_batch = 8;           ///< global micro-batch (every rank count must divide it)
  std::int64_t seed = 15;        ///< initialisation and data order
  std::string fault = "none";    ///< none, kill (SIGKILL itself), hang, corrupt, disk-full
  std::int64_t fault_step = 0;   ///< the step at whose start it strikes (disk-full: checkpoint)
  int fault_rank = 0;            ///< the rank it strikes
  int timeout_ms = 30000;        ///< the collectives' timeout
};

/// Adds the worker's flags (the names worker_args writes).
void add_worker_flags(Flags& flags, WorkerOptions* options);

/// The command-line arguments that make the worker see `options`.
std::vector<std::string> worker_args(const WorkerOptions& options);

/// The data-parallel run a supervised job trains (chapter 5, rung no-sync), shared by the thread
/// supervisor's and the worker's runs so both train the same model for the same flags.
ddp::DdpOptions supervised_run(int layers, int d_model, int heads, int micro_batch,
                               std::int64_t steps, std::int64_t seed);

/// `<dir>/heartbeat-<rank>`: the steps the rank has done; its modification time is the beat.
std::string heartbeat_file(const std::string& dir, int rank);

/// `<dir>/steps.log`: rank 0 appends one line per step execution, "attempt step loss start end
/// tokens" (times: seconds since the Unix epoch).
std::string step_log_file(const std::string& dir);

/// `<dir>/final.weights`: rank 0's FP32 weights after the last step, raw.
std::string final_weights_file(const std::string& dir);

}  // namespace book::prod
