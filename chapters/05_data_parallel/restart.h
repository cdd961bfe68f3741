/// @file
/// Stability: a run that survives a rank's failure. Synchronous data parallelism cannot lose a
/// rank and go on (every collective needs all of them), so what a real job does is: every rank
/// stops with an error naming the failure (no hang: chapter 3's timeouts and failure propagation),
/// the launcher starts all ranks again (torchrun's elastic restart), and they resume from the last
/// checkpoint, written atomically (chapter 4). Because the run is deterministic and the checkpoint
/// holds the data stream's position, the resumed run ends with exactly the weights of a run that
/// never failed; the steps after the checkpoint are simply done twice.
///
/// train_with_restarts is that launcher for thread ranks; under MPI the same loop is a shell loop
/// around mpirun (the README shows it).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "chapters/05_data_parallel/ddp_options.h"

namespace book::ddp {

/// A run with checkpoints and restarts.
struct RestartOptions {
  DdpOptions ddp;                            ///< the run (with the failure to inject, if any)
  int world_size = 2;                        ///< thread ranks
  std::int64_t steps = 10;                   ///< optimizer steps to finish
  std::int64_t checkpoint_every = 2;         ///< a checkpoint after every this many steps
  std::string checkpoint_path;               ///< where (written atomically by rank 0)
  int max_restarts = 3;                      ///< attempts after the first before giving up
  std::chrono::milliseconds timeout{30000};  ///< how long a rank waits for another
};

/// What happened.
struct RestartReport {
  std::vector<float> final_weights;        ///< rank 0's FP32 weights after the last step
  std::vector<float> losses;               ///< the loss of each step 1..steps (last attempt's)
  int restarts = 0;                        ///< attempts that failed and were restarted
  std::vector<std::string> failures;       ///< the error each failed attempt ended with
  std::vector<std::int64_t> resumed_from;  ///< the step each restart resumed from (0: scratch)
};

/// Runs RestartOptions::steps steps on world_size thread ranks, checkpointing every
/// checkpoint_every steps; when an attempt fails (any rank throws), starts all ranks again from
/// the last checkpoint (or from scratch if there is none yet), with the injected failure removed
/// (the broken rank was "replaced"). A checkpoint left at checkpoint_path by an earlier run is
/// removed first. Throws the last failure after max_restarts failed restarts.
RestartReport train_with_restarts(const RestartOptions& options);

}  // namespace book::ddp
