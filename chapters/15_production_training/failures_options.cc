// The supervised run's flags (failures_options.h).
#include "chapters/15_production_training/failures_options.h"

#include <algorithm>
#include <iostream>
#include <sstream>

#include "chapters/15_production_training/worker_options.h"
#include "common/table.h"

namespace book::prod {

void add_failures_flags(Flags& flags, FailuresOptions* o, const std::string& p) {
  flags.add(p + "ranks", &o->ranks, "supervised run: thread ranks").range(1, 64);
  flags.add(p + "steps", &o->steps, "supervised run: optimizer steps").range(1, 1000000000);
  flags.add(p + "every", &o->every, "supervised run: a checkpoint every K steps (K >= 1)");
  flags.add(p + "keep", &o->keep, "supervised run: checkpoints kept (the newest)").range(1, 100);
  flags.add(p + "faults", &o->faults, "supervised run: injected failures").range(0, 1000);
  flags.add(p + "kinds", &o->kinds, "supervised run: fault kinds, in turn")
      .choices({"kill", "hang", "corrupt", "disk-full"});
  flags.add(p + "seed", &o->seed, "supervised run: the failure schedule's seed");
  flags.add(p + "zero", &o->zero,
            "supervised run: chapter 6's ZeRO-1 (sharded checkpoints) instead of DDP");
  flags
      .add(p + "restart-ranks", &o->restart_ranks,
           "supervised run: ranks after the first failure (0: the same; fewer: resharded)")
      .range(0, 64);
  flags.add(p + "max-restarts", &o->max_restarts, "supervised run: restarts before giving up")
      .range(0, 1000000);
  flags.add(p + "heartbeat", &o->heartbeat_s,
            "supervised run: heartbeat timeout, s (longer than a step; a hang costs this)");
  flags.add(p + "layers", &o->layers, "supervised run: transformer blocks").range(1, 64);
  flags.add(p + "d-model", &o->d_model, "supervised run: model width").range(4, 4096);
  flags.add(p + "heads", &o->heads, "supervised run: attention heads").range(1, 64);
  flags.add(p + "micro-batch", &o->micro_batch, "supervised run: global micro-batch")
      .range(1, 1 << 16);
  flags.add(p + "dir", &o->dir,
            "supervised run: checkpoint folder (default results/ch15_checkpoints)");
  flags
      .add(p + "process-steps", &o->process_steps,
           "steps of the MPI-process job under mpirun (0: none)")
      .range(0, 1000000);
  flags.add(p + "sweep", &o->sweep, "checkpoint intervals K to sweep (empty: no sweep)");
  flags.add(p + "sweep-steps", &o->sweep_steps, "steps of each sweep run").range(2, 100000);
  flags.add(p + "sweep-faults", &o->sweep_faults, "kills per sweep run").range(1, 1000);
  flags
      .add(p + "sweep-delay-ms", &o->sweep_delay_ms,
           "sweep: added time per checkpoint write, ms (storage slower than this disk)")
      .range(0.0, 60000.0);
  flags
      .add(p + "sweep-repeats", &o->sweep_repeats,
           "sweep runs per K, interleaved, one seeded schedule each")
      .range(1, 100);
}

void shorten_for_tour(const Flags& flags, FailuresOptions* o, const std::string& p) {
  if (!flags.was_set(p + "steps")) o->steps = 30;
  if (!flags.was_set(p + "d-model")) o->d_model = 32;
  if (!flags.was_set(p + "sweep")) o->sweep = {2, 4, 8, 16};
  if (!flags.was_set(p + "sweep-steps")) o->sweep_steps = 48;
  if (!flags.was_set(p + "process-steps")) o->process_steps = 12;
  if (!flags.was_set(p + "sweep-repeats")) o->sweep_repeats = 2;
}

SupervisorOptions supervisor_options(const FailuresOptions& o, const std::string& default_dir) {
  SupervisorOptions s;
  s.name =
      "supervised N=" + std::to_string(o.ranks) + ", " + std::to_string(o.faults) + " failures";
  s.ddp = supervised_run(o.layers, o.d_model, o.heads, o.micro_batch, o.steps, 1234);
  s.ranks = o.ranks;
  s.steps = o.steps;
  s.checkpoint_every = o.every;
  s.keep_checkpoints = o.keep;
  s.checkpoint_dir = o.dir.empty() ? default_dir : o.dir;
  s.max_restarts = o.max_restarts;
  s.zero = o.zero;
  s.restart_ranks = o.restart_ranks;
  s.heartbeat_timeout_s = o.heartbeat_s;
  std::vector<FaultKind> kinds;
  for (const std::string& k : o.kinds) kinds.push_back(parse_fault(k));
  s.faults = seeded_faults(static_cast<std::uint64_t>(o.seed), o.faults, o.steps, o.ranks, kinds);
  // A full disk strikes at a checkpoint: one drawn after the last checkpoint strikes at the last.
  const std::int64_t last_checkpoint = o.steps / std::max<std::int64_t>(1, o.every) * o.every;
  for (Fault& f : s.faults)
    if (f.kind == FaultKind::kDiskFull && last_checkpoint >= 1)
      f.step = std::min(f.step, last_checkpoint);
  return s;
}

std::string describe(const FailuresOptions& o) {
  std::ostringstream out;
  out << o.layers << " layers, d_model " << o.d_model << ", " << o.ranks << " thread ranks, "
      << o.steps << " steps, a checkpoint every " << o.every << ", " << o.faults
      << " seeded failures (seed " << o.seed << "), heartbeat timeout " << o.heartbeat_s << " s";
  return out.str();
}

void print_failures(const SupervisedRun& run, const std::string& stem) {
  if (run.failures.empty()) {
    std::cout << "no failures\n";
    return;
  }

  Table table({"#", "what struck", "failed in step", "noticed by", "noticed after s",
               "checkpoints set aside", "resumed from", "steps redone (plan)", "down s"});
  int i = 0;
  for (const FailureRecord& f : run.failures) {
    std::string aside;
    for (std::int64_t step : f.unverified)
      aside += (aside.empty() ? "" : ", ") + std::to_string(step);
    std::string noticed = f.detected_by == f.cause ? "the error itself" : f.detected_by;
    if (noticed.size() > 70) noticed = noticed.substr(0, 67) + "...";
    table.add_row({std::to_string(++i), f.cause, std::to_string(f.failed_step), noticed,
                   fixed(f.detected_s - f.failed_s, 3), aside.empty() ? "-" : aside,
                   std::to_string(f.plan.resume_from), std::to_string(f.plan.steps_lost),
                   fixed(f.resumed_s - f.failed_s, 3)});
  }
  std::cout << table.markdown() << "\n";
  table.write_csv(results_dir() + "/" + stem + ".csv");
}

}  // namespace book::prod
