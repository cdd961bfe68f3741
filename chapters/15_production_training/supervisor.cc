// The supervisor on thread ranks (supervisor.h): launch, watch, tear down, plan, restart.
#include "chapters/15_production_training/supervisor.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <iomanip>
#include <mutex>
#include <sstream>
#include <thread>

#include "chapters/03_collectives/threads.h"
#include "chapters/04_training_baseline/checkpoint.h"
#include "chapters/15_production_training/checkpoint_folder.h"
#include "chapters/15_production_training/rank_trainer.h"
#include "common/check.h"

namespace book::prod {
namespace {

using Clock = std::chrono::steady_clock;

// What every rank of one attempt and the watchdog share.
struct Attempt {
  explicit Attempt(int ranks) : beat_s(ranks), done(ranks) {}
  std::vector<std::atomic<double>> beat_s;      // each rank's last heartbeat, since the start
  std::vector<std::atomic<std::int64_t>> done;  // each rank's completed steps
  std::atomic<bool> armed{false};               // the watchdog watches (after a measured step)
  std::atomic<bool> torn_down{false};           // the job is being torn down
  std::mutex mutex;                             // guards what follows, and wakes a hung rank
  std::condition_variable wake;
  double failed_s = -1, detected_s = -1;  // the first failure, and when it was known
  std::string cause, detected_by;         // what struck, and what noticed it
  std::string refusal;                    // a configuration error: not restarted
  double first_step_s = -1;               // when the first step began (after the load)

  // A failure struck (the first is the one; later ones are its consequences). A hang strikes
  // silently: nobody knows until the watchdog or a collective's timeout notices.
  void strike(double when, const std::string& what) {
    std::lock_guard<std::mutex> lock(mutex);
    if (failed_s < 0) failed_s = when, cause = what;
  }
  // Somebody noticed a failure: the job is torn down (which also ends an injected hang).
  void detect(double when, const std::string& what) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (failed_s < 0) failed_s = when, cause = what;
      if (detected_s < 0) detected_s = when, detected_by = what;
    }
    torn_down = true;
    wake.notify_all();
  }
};

}  // namespace

void check_supervisor_options(const SupervisorOptions& o) {
  BOOK_CHECK(o.steps >= 1, "supervise: steps must be >= 1, got " << o.steps);
  BOOK_CHECK(o.checkpoint_every >= 1, "supervise: the checkpoint interval must be >= 1 step, got "
                                          << o.checkpoint_every
                                          << "; a run without checkpoints cannot resume");
  BOOK_CHECK(o.keep_checkpoints >= 1,
             "supervise: keep at least 1 checkpoint, got " << o.keep_checkpoints);
  BOOK_CHECK(o.max_restarts >= 0, "supervise: max_restarts must be >= 0, got " << o.max_restarts);
  BOOK_CHECK(o.heartbeat_timeout_s > 0,
             "supervise: the heartbeat timeout must be > 0 s, got " << o.heartbeat_timeout_s);
  BOOK_CHECK(o.checkpoint_delay_s >= 0,
             "supervise: the checkpoint delay must be >= 0 s, got " << o.checkpoint_delay_s);
  BOOK_CHECK(o.ranks >= 1, "supervise: ranks must be >= 1, got " << o.ranks);
  BOOK_CHECK(o.restart_ranks >= 0 && o.restart_ranks <= o.ranks,
             "supervise: restart_ranks " << o.restart_ranks << " must be within 0.." << o.ranks
                                         << " (0: restart on the same ranks)");
  for (const Fault& f : o.faults) {
    BOOK_CHECK(f.step >= 1 && f.step <= o.steps && f.rank >= 0 && f.rank < o.ranks,
               "supervise: a " << fault_name(f.kind) << " fault at step " << f.step << " on rank "
                               << f.rank << " is outside the run (steps 1.." << o.steps
                               << ", ranks 0.." << o.ranks - 1 << ")");
    BOOK_CHECK(
        f.kind != FaultKind::kDiskFull ||
            (f.step + o.checkpoint_every - 1) / o.checkpoint_every * o.checkpoint_every <= o.steps,
        "supervise: a disk-full fault at step "
            << f.step << " never strikes: no checkpoint is written at or after it (every "
            << o.checkpoint_every << " steps, " << o.steps << " steps)");
  }
}

SupervisedRun supervise(const SupervisorOptions& options) {
  check_supervisor_options(options);
  prepare_checkpoint_dir(options.checkpoint_dir);  // refused here, before any training
  const ddp::DdpOptions ddp = ddp::resolve(options.ddp, options.ranks);
  if (options.restart_ranks > 0) ddp::resolve(options.ddp, options.restart_ranks);  // refused now
  const std::string& dir = options.checkpoint_dir;
  const auto start = Clock::now();
  const auto now = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };

  SupervisedRun run;
  run.log.name = options.name;
  run.log.ranks = options.ranks;
  run.log.model_flops_per_token = ddp.train.model.training_flops_per_token(ddp.train.model.context);
  std::vector<StepRecord> useful;  // step s at [s - 1]: its last, useful execution
  double last_progress = 0;
  std::vector<char> fired(options.faults.size(), 0);  // each written by one rank
  std::int64_t high_water = 0, resume_from = 0;

  for (int attempt = 0;; ++attempt) {
    const int ranks =
        attempt > 0 && options.restart_ranks > 0 ? options.restart_ranks : options.ranks;
    Attempt job(ranks);
    for (auto& b : job.beat_s) b = now();
    std::vector<float> weights;
    std::thread watchdog([&] {
      // A rank whose heartbeat is older than the timeout is hung: tear the job down.
      while (!job.torn_down) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        if (!job.armed) continue;
        const double t = now();
        double oldest = t;
        std::vector<std::int64_t> done;
        for (int r = 0; r < ranks; ++r) {
          oldest = std::min(oldest, job.beat_s[r].load());
          done.push_back(job.done[r]);
        }
        if (t - oldest <= options.heartbeat_timeout_s) continue;
        const std::string what = hang_verdict(options.heartbeat_timeout_s, done);
        job.strike(oldest, what);
        job.detect(t, what);
      }
    });
    coll::ThreadsOptions threads;
    // The collectives' timeout is the heartbeat's (at least 1 s, so the first step, measured
    // before the watchdog is armed, is never cut short).
    threads.timeout = std::chrono::milliseconds(
        std::max<long long>(1000, static_cast<long long>(options.heartbeat_timeout_s * 1000)));
    std::string error;
    try {
      coll::run_ranks(
          ranks,
          [&](coll::Communicator& comm) {
            const int rank = comm.rank();
            const auto beat = [&](std::int64_t done) {
              job.done[rank] = done, job.beat_s[rank] = now();
            };
            try {
              const std::unique_ptr<RankTrainer> owned = make_rank_trainer(comm, ddp, options.zero);
              RankTrainer& trainer = *owned;
              if (resume_from > 0) trainer.load(checkpoint_file(dir, resume_from));
              beat(trainer.steps_done());
              if (rank == 0) job.first_step_s = now();
              if (attempt > 0) job.armed = true;
              while (trainer.steps_done() < options.steps) {
                const std::int64_t step = trainer.steps_done() + 1;
                for (std::size_t i = 0; i < options.faults.size(); ++i) {
                  const Fault& f = options.faults[i];
                  if (f.step != step || f.rank != rank || f.kind == FaultKind::kDiskFull ||
                      fired[i])
                    continue;
                  fired[i] = 1;
                  std::ostringstream what;
                  what << "rank " << rank << " " << fault_name(f.kind) << " at step " << step
                       << " (injected)";
                  if (f.kind == FaultKind::kCorruptNewest) {
                    const std::int64_t bad = corrupt_newest_checkpoint(dir);
                    what << ": checkpoint of step " << bad << " corrupted, rank killed";
                  }
                  job.strike(now(), what.str());
                  if (f.kind != FaultKind::kHang) throw Error(what.str());  // noticed at once
                  // A hang: no more heartbeats; wait until the supervisor tears the job down.
                  std::unique_lock<std::mutex> lock(job.mutex);
                  job.wake.wait(lock, [&] { return job.torn_down.load(); });
                  throw Error(what.str() + ", torn down by the supervisor");
                }
                const double t0 = now();
                const train::StepResult result = trainer.step();
                const double t1 = now();
                if (rank == 0) {
                  run.executions.push_back({attempt, step, t0, t1, step <= high_water});
                  if (step <= high_water) run.redone_seconds += t1 - t0;
                  high_water = std::max(high_water, step);
                  useful.resize(static_cast<std::size_t>(step));  // later steps: thrown away
                  useful.back() = {step, result.loss, t1 - t0, tokens_per_step(ddp), t1};
                  if (options.progress && t1 - last_progress >= options.progress_every_s) {
                    last_progress = t1;
                    std::ostringstream line;
                    line << "progress: step " << step << ", loss " << result.loss << ", "
                         << run.failures.size() << " restarts, " << std::fixed
                         << std::setprecision(1) << t1 << " s";
                    options.progress(line.str());
                  }
                  if (attempt == 0 && step == 1 && t1 - t0 >= options.heartbeat_timeout_s) {
                    std::ostringstream what;
                    what << "supervise: the heartbeat timeout " << options.heartbeat_timeout_s
                         << " s is shorter than one step (the first took " << t1 - t0
                         << " s): a healthy rank would be declared hung; give a timeout of "
                            "several steps";
                    job.refusal = what.str();
                    throw Error(job.refusal);
                  }
                }
                beat(step);
                if (step == 1 && rank == 0) job.armed = true;  // after the step's measurement
                if (step % options.checkpoint_every != 0) continue;
                if (rank == 0)
                  for (std::size_t i = 0; i < options.faults.size(); ++i)
                    if (options.faults[i].kind == FaultKind::kDiskFull && !fired[i] &&
                        options.faults[i].step <= step) {
                      fired[i] = 1;  // the disk fills up 1 KiB into the file
                      train::fail_next_checkpoint_write_after(1024);
                      job.strike(now(), "disk full writing the checkpoint of step " +
                                            std::to_string(step) + " (injected)");
                    }
                const double c0 = now();
                if (rank == 0 && options.checkpoint_delay_s > 0)
                  std::this_thread::sleep_for(
                      std::chrono::duration<double>(options.checkpoint_delay_s));
                trainer.save(checkpoint_file(dir, step));
                if (rank == 0) {
                  prune_checkpoints(dir, options.keep_checkpoints);
                  run.checkpoints.push_back({step, c0, now()});
                  run.checkpoint_seconds += now() - c0;
                }
                beat(step);
                if (options.stop_after_s > 0) {  // soak mode: every rank stops at this step
                  double late = now() > options.stop_after_s ? 1 : 0;
                  comm.all_reduce(std::span<double>(&late, 1), coll::ReduceOp::kMax);
                  if (late > 0) break;
                }
              }
              std::vector<float> w = trainer.master_weights();  // collective (ZeRO gathers)
              if (rank == 0) weights = std::move(w);
            } catch (const Error& e) {
              job.detect(now(), e.what());  // the first error is the detection
              throw;
            }
          },
          threads);
    } catch (const NotImplemented&) {
      throw;
    } catch (const Error& e) {
      error = e.what();
    }
    job.torn_down = true;
    job.wake.notify_all();
    watchdog.join();
    if (attempt > 0) run.failures.back().resumed_s = job.first_step_s;
    if (error.empty()) {
      run.final_weights = std::move(weights);
      break;
    }
    BOOK_CHECK(job.refusal.empty(), job.refusal);
    //! [restart]
    FailureRecord failure;
    failure.cause = job.cause;
    failure.detected_by = job.detected_by;
    failure.error = error;
    failure.failed_s = job.failed_s;
    failure.detected_s = job.detected_s;
    failure.failed_step = *std::min_element(job.done.begin(), job.done.end()) + 1;
    failure.plan = plan_restart(dir, failure.failed_step, &failure.unverified);
    BOOK_CHECK(attempt < options.max_restarts, "supervise: gave up after "
                                                   << attempt << " restarts (max_restarts "
                                                   << options.max_restarts
                                                   << "); the last failure, at step "
                                                   << failure.failed_step << ": " << failure.cause);
    resume_from = failure.plan.resume_from;
    run.predicted_redone += failure.plan.steps_lost;
    run.failures.push_back(failure);
    //! [restart]
  }
  run.log.wall_seconds = now();
  run.log.restarts = static_cast<int>(run.failures.size());
  for (const StepExecution& e : run.executions) run.log.steps_redone += e.redone ? 1 : 0;
  for (const FailureRecord& f : run.failures) run.log.down_seconds += f.resumed_s - f.failed_s;
  run.log.steps = std::move(useful);
  return run;
}

}  // namespace book::prod
