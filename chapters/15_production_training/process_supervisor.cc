// The supervisor for MPI processes (process_supervisor.h): fork, exec mpirun, watch, kill, plan,
// relaunch.
#include "chapters/15_production_training/process_supervisor.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "chapters/15_production_training/checkpoint_folder.h"
#include "common/check.h"

namespace book::prod {
namespace fs = std::filesystem;
namespace {

double epoch_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// One launch: mpirun in a process group of its own, its output in `log`.
pid_t launch(const ProcessSupervisorOptions& o, const WorkerOptions& job, const std::string& log) {
  std::vector<std::string> args = o.launcher;
  args.insert(args.end(), {"-np", std::to_string(o.ranks), o.worker});
  for (const std::string& a : worker_args(job)) args.push_back(a);
  const pid_t pid = ::fork();
  BOOK_CHECK(pid >= 0, "supervise_processes: fork failed");
  if (pid == 0) {  // the child: only async-signal-safe calls until exec
    ::setpgid(0, 0);
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) ::dup2(fd, 1), ::dup2(fd, 2);
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execvp(argv[0], argv.data());
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also here: no race with the child's own call
  return pid;
}

// A rank's heartbeat: (steps done, when), or (-1, 0) before its first.
std::pair<std::int64_t, double> heartbeat(const std::string& dir, int rank) {
  struct stat info {};
  const std::string file = heartbeat_file(dir, rank);
  if (::stat(file.c_str(), &info) != 0) return {-1, 0};
  std::int64_t done = -1;
  std::ifstream(file) >> done;
  return {done, double(info.st_mtim.tv_sec) + 1e-9 * double(info.st_mtim.tv_nsec)};
}

// What the job's output says went wrong: the first line a worker wrote with "error:", else
// mpirun's last words (not its rulers of dashes).
std::string job_error(const std::string& file) {
  std::ifstream in(file);
  std::string line, last;
  while (std::getline(in, line)) {
    if (line.find("error:") != std::string::npos) return line;
    if (!line.empty() && line.find("-----") == std::string::npos) last = line;
  }
  return last.empty() ? "(no output)" : last;
}

}  // namespace

SupervisedRun supervise_processes(const ProcessSupervisorOptions& o) {
  SupervisorOptions checked;
  checked.ranks = o.ranks;
  checked.steps = o.job.steps;
  checked.checkpoint_every = o.job.every;
  checked.keep_checkpoints = o.job.keep;
  checked.checkpoint_dir = o.job.dir;
  checked.max_restarts = o.max_restarts;
  checked.heartbeat_timeout_s = o.heartbeat_timeout_s;
  checked.faults = o.faults;
  check_supervisor_options(checked);
  BOOK_CHECK(::access(o.worker.c_str(), X_OK) == 0 && fs::is_regular_file(o.worker),
             "supervise_processes: the worker "
                 << o.worker
                 << " is not an executable file; build "
                    "//chapters/15_production_training:train_worker");
  const std::string& dir = o.job.dir;
  prepare_checkpoint_dir(dir);
  for (const std::string& f : {step_log_file(dir), final_weights_file(dir)}) fs::remove(f);
  std::vector<Fault> faults = o.faults;
  std::sort(faults.begin(), faults.end(),
            [](const Fault& a, const Fault& b) { return a.step < b.step; });
  const double start = epoch_seconds();
  SupervisedRun run;
  run.log.name = o.name;
  run.log.ranks = o.ranks;
  const ddp::DdpOptions model =
      ddp::resolve(supervised_run(o.job.layers, o.job.d_model, o.job.heads, o.job.micro_batch,
                                  o.job.steps, o.job.seed),
                   o.ranks);
  run.log.model_flops_per_token =
      model.train.model.training_flops_per_token(model.train.model.context);
  std::size_t next_fault = 0;
  std::int64_t resume_from = 0;
  for (int attempt = 0;; ++attempt) {
    WorkerOptions job = o.job;
    job.resume_from = resume_from;
    job.attempt = attempt;
    job.timeout_ms = static_cast<int>(std::max(1000.0, 2000 * o.heartbeat_timeout_s));
    if (next_fault < faults.size()) {
      job.fault = fault_name(faults[next_fault].kind);
      job.fault_step = faults[next_fault].step;
      job.fault_rank = faults[next_fault].rank;
    }
    for (int r = 0; r < o.ranks; ++r) fs::remove(heartbeat_file(dir, r));
    const std::string output = dir + "/attempt-" + std::to_string(attempt) + ".log";
    const pid_t pid = launch(o, job, output);
    int status = 0;
    std::string hung;
    double detected = 0, last_beat = epoch_seconds();
    for (;;) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      if (::waitpid(pid, &status, WNOHANG) == pid) break;
      bool all_beat = true;
      double oldest = 1e300;
      std::vector<std::int64_t> done;
      for (int r = 0; r < o.ranks; ++r) {
        const auto [steps, when] = heartbeat(dir, r);
        all_beat = all_beat && steps >= 0;
        oldest = std::min(oldest, when);
        done.push_back(steps);
      }
      if (!all_beat || epoch_seconds() - oldest <= o.heartbeat_timeout_s) continue;
      // A rank is hung: end the whole job, as torchrun's agent does.
      hung = hang_verdict(o.heartbeat_timeout_s, done);
      detected = epoch_seconds();
      last_beat = oldest;
      ::kill(-pid, SIGKILL);
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      break;
    }
    if (hung.empty()) detected = epoch_seconds();
    if (hung.empty() && WIFEXITED(status) && WEXITSTATUS(status) == 0) break;
    // The job failed: what struck, where, and where to resume.
    FailureRecord failure;
    std::int64_t least = -1;
    double newest = 0;
    for (int r = 0; r < o.ranks; ++r) {
      const auto [steps, when] = heartbeat(dir, r);
      least = least < 0 ? std::max<std::int64_t>(steps, 0)
                        : std::min(least, std::max<std::int64_t>(steps, 0));
      newest = std::max(newest, when);
    }
    failure.failed_step = std::max<std::int64_t>(least, resume_from) + 1;
    failure.error = job_error(output);
    failure.detected_by = !hung.empty() ? hung
                          : WIFSIGNALED(status)
                              ? "mpirun killed by signal " + std::to_string(WTERMSIG(status))
                              : "mpirun exited with status " + std::to_string(WEXITSTATUS(status));
    failure.cause = job.fault == "none" ? failure.error
                    : job.fault == "disk-full"
                        ? "disk full at the first checkpoint from step " +
                              std::to_string(job.fault_step) + " (injected: RLIMIT_FSIZE)"
                        : "rank " + std::to_string(job.fault_rank) + " " + job.fault + " at step " +
                              std::to_string(job.fault_step) + " (injected)";
    if (job.fault != "none") ++next_fault;
    failure.failed_s = (hung.empty() ? std::max(newest, start) : last_beat) - start;
    failure.detected_s = detected - start;
    failure.plan = plan_restart(dir, failure.failed_step, &failure.unverified);
    BOOK_CHECK(attempt < o.max_restarts, "supervise_processes: gave up after "
                                             << attempt << " restarts (max_restarts "
                                             << o.max_restarts << "); the last failure, at step "
                                             << failure.failed_step << ": " << failure.cause << " ("
                                             << failure.error << ")");
    resume_from = failure.plan.resume_from;
    run.predicted_redone += failure.plan.steps_lost;
    run.failures.push_back(failure);
  }
  run.log.wall_seconds = epoch_seconds() - start;
  // The step log: every execution, in order; the last of each step is the useful one.
  std::ifstream log(step_log_file(dir));
  int attempt = 0;
  std::int64_t step = 0, tokens = 0, high_water = 0;
  double loss = 0, t0 = 0, t1 = 0;
  while (log >> attempt >> step >> loss >> t0 >> t1 >> tokens) {
    const bool redone = step <= high_water;
    run.executions.push_back({attempt, step, t0 - start, t1 - start, redone});
    if (redone) run.redone_seconds += t1 - t0;
    high_water = std::max(high_water, step);
    run.log.steps.resize(static_cast<std::size_t>(step));
    run.log.steps.back() = {step, loss, t1 - t0, tokens, t1 - start};
    run.log.steps_redone += redone ? 1 : 0;
  }
  for (std::size_t k = 0; k < run.failures.size(); ++k) {
    for (const StepExecution& e : run.executions)
      if (e.attempt == static_cast<int>(k) + 1) {
        run.failures[k].resumed_s = e.start_s;
        break;
      }
    run.log.down_seconds += std::max(0.0, run.failures[k].resumed_s - run.failures[k].failed_s);
  }
  run.log.restarts = static_cast<int>(run.failures.size());
  std::ifstream weights(final_weights_file(dir), std::ios::binary);
  const auto bytes = fs::file_size(final_weights_file(dir));
  run.final_weights.resize(bytes / sizeof(float));
  weights.read(reinterpret_cast<char*>(run.final_weights.data()),
               static_cast<std::streamsize>(bytes));
  return run;
}

}  // namespace book::prod
