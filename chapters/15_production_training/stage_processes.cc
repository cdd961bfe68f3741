// "Surviving failures" with MPI processes: the same seeded failures on a job of `mpirun
// train_worker` processes, SIGKILLed and hung for real, against an uninterrupted job.
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "chapters/15_production_training/process_supervisor.h"
#include "chapters/15_production_training/stage_failures.h"
#include "common/table.h"

namespace book::prod::stage {
namespace {

// `name` found on PATH, or "".
std::string on_path(const std::string& name) {
  std::istringstream path(std::getenv("PATH") ? std::getenv("PATH") : "");
  for (std::string dir; std::getline(path, dir, ':');)
    if (const std::string file = dir + "/" + name; ::access(file.c_str(), X_OK) == 0) return file;
  return "";
}

}  // namespace

std::vector<RunLog> run_process_demo(const FailuresOptions& o, bool tour) {
  std::cout << "\n### The same with MPI processes under mpirun\n\n";
  // :train_worker is built next to this binary (same package): bazel-bin and `bazel run` alike.
  const std::string worker =
      (std::filesystem::read_symlink("/proc/self/exe").parent_path() / "train_worker").string();
  if (::access(worker.c_str(), X_OK) != 0 || on_path("mpirun").empty()) {
    std::cout << "skipped: "
              << (on_path("mpirun").empty() ? "no mpirun on PATH" : worker + " not built")
              << " (bazel build //chapters/15_production_training:train_worker; OpenMPI)\n";
    return {};
  }
  FailuresOptions run_options = o;
  run_options.steps = o.process_steps;
  const SupervisorOptions threads = supervisor_options(run_options, results_dir() + "/ch15_mpi");
  ProcessSupervisorOptions p;
  p.worker = worker;
  p.ranks = o.ranks;
  p.job.steps = o.process_steps;
  p.job.every = o.every;
  p.job.keep = o.keep;
  p.job.dir = threads.checkpoint_dir;
  p.job.layers = o.layers;
  p.job.d_model = o.d_model;
  p.job.heads = o.heads;
  p.job.micro_batch = o.micro_batch;
  p.job.seed = 1234;
  p.max_restarts = o.max_restarts;
  // mpirun notices a dead rank within about a second; a longer heartbeat timeout lets it, so the
  // table shows both detectors (mpirun's exit for kills and errors, the heartbeat for the hang).
  p.heartbeat_timeout_s = std::max(o.heartbeat_s, 3.0);
  p.name = "uninterrupted, " + std::to_string(o.ranks) + " MPI processes";
  const SupervisedRun clean = supervise_processes(p);
  p.faults = threads.faults;
  p.name = "supervised, " + std::to_string(o.ranks) + " MPI processes, " +
           std::to_string(p.faults.size()) + " failures";
  const SupervisedRun run = supervise_processes(p);
  print_failures(run, "ch15_process_failures");
  const bool same = clean.final_weights.size() == run.final_weights.size() &&
                    std::memcmp(clean.final_weights.data(), run.final_weights.data(),
                                clean.final_weights.size() * sizeof(float)) == 0;
  std::cout << "weights:   after step " << p.job.steps << ", "
            << (same ? "bit-identical to" : "DIFFERENT from") << " the uninterrupted job ("
            << run.final_weights.size() << " floats compared); mpirun's output in " << p.job.dir
            << "/attempt-*.log\n"
            << "redone:    " << run.log.steps_redone << " step executions (from the step log), "
            << run.predicted_redone << " planned by restart_plan\n";
  if (tour)
    std::cout << "tour: 15 | MPI processes under mpirun: final weights after "
              << run.failures.size()
              << " failures (SIGKILL, hang killed by the supervisor, corrupt checkpoint, EFBIG) | "
              << (same ? "bit-identical" : "DIFFERENT") << ", " << run.log.steps_redone
              << " steps redone = " << run.predicted_redone
              << " planned | the supervisor relaunches the job as torchrun's agent does\n";
  return {clean.log, run.log};
}

}  // namespace book::prod::stage
