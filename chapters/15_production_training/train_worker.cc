// The training job as MPI processes, for the process supervisor (process_supervisor.h):
//   mpirun -np N train_worker --steps S --every K --dir D [--resume-from C] [--fault F ...]
// Every rank trains chapter 5's DdpTrainer over chapter 3's MPI communicator, beats a heartbeat
// file after every step and checkpoint, and rank 0 writes the checkpoints (step-numbered, atomic),
// a line per step to the step log, and the final weights. Faults, on purpose: kill (the process
// sends itself SIGKILL: no error, no clean-up, as a lost node), hang (it stops and sleeps until
// killed), corrupt (it flips a byte of the newest checkpoint, then kills itself), disk-full
// (RLIMIT_FSIZE caps rank 0's file size at 1 KiB for the checkpoint write at or after the step: a
// real EFBIG from the kernel, partway through chapter 4's atomic write).
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

#include "chapters/03_collectives/mpi.h"
#include "chapters/05_data_parallel/ddp_trainer.h"
#include "chapters/15_production_training/checkpoint_folder.h"
#include "chapters/15_production_training/worker_options.h"
#include "common/main.h"

namespace {

using namespace book;
using namespace book::prod;

double epoch_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// Written to a temporary and renamed: the supervisor never reads half a number.
void beat(const std::string& dir, int rank, std::int64_t done) {
  const std::string file = heartbeat_file(dir, rank);
  std::ofstream(file + ".tmp") << done << "\n";
  std::filesystem::rename(file + ".tmp", file);
}

void train(const WorkerOptions& o) {
  coll::MpiCommunicator world;
  world.set_timeout(std::chrono::milliseconds(o.timeout_ms));
  const int rank = world.rank();
  const bool mine = o.fault_rank == rank;
  ddp::DdpTrainer trainer(
      world, supervised_run(o.layers, o.d_model, o.heads, o.micro_batch, o.steps, o.seed));
  if (o.resume_from > 0) trainer.load(checkpoint_file(o.dir, o.resume_from));
  beat(o.dir, rank, trainer.steps_done());
  std::ofstream log;
  if (rank == 0) log.open(step_log_file(o.dir), std::ios::app);
  bool disk_full_pending = o.fault == "disk-full" && rank == 0;
  while (trainer.steps_done() < o.steps) {
    const std::int64_t step = trainer.steps_done() + 1;
    if (mine && step == o.fault_step) {
      if (o.fault == "corrupt") corrupt_newest_checkpoint(o.dir);
      if (o.fault == "kill" || o.fault == "corrupt") ::raise(SIGKILL);
      if (o.fault == "hang")
        for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));  // until SIGKILL
    }
    const double t0 = epoch_seconds();
    const train::StepResult result = trainer.step();
    if (rank == 0)
      log << o.attempt << " " << step << " " << result.loss << " " << std::fixed << t0 << " "
          << epoch_seconds() << " " << trainer.tokens_per_step() << std::endl;
    beat(o.dir, rank, step);
    if (step % o.every != 0) continue;
    if (disk_full_pending && step >= o.fault_step) {
      ::signal(SIGXFSZ, SIG_IGN);  // the write then fails with EFBIG instead of killing us
      const rlimit small{1024, RLIM_INFINITY};
      ::setrlimit(RLIMIT_FSIZE, &small);
      disk_full_pending = false;
    }
    trainer.save(checkpoint_file(o.dir, step));
    if (rank == 0) prune_checkpoints(o.dir, o.keep);
    beat(o.dir, rank, step);
  }
  if (rank == 0) {
    const auto w = trainer.master_weights();
    std::ofstream(final_weights_file(o.dir), std::ios::binary)
        .write(reinterpret_cast<const char*>(w.data()),
               static_cast<std::streamsize>(w.size_bytes()));
  }
}

int body(int argc, char** argv) {
  coll::MpiSession session(&argc, &argv);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // mpirun killed: this rank goes too, hung or not
  WorkerOptions o;
  Flags flags("train_worker", "one launch of the supervised training job (under mpirun)");
  add_worker_flags(flags, &o);
  flags.parse(argc, argv);
  try {
    train(o);
  } catch (const Error& e) {
    // Fail fast, as MPI programs do: returning would wait in MPI_Finalize for ranks that are
    // themselves waiting in a collective for this one; MPI_Abort ends the whole job now.
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    std::cerr << "train_worker: rank " << rank << ": error: " << e.what() << std::endl;
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return book::run_main(argc, argv, body); }
