// The checkpoint-interval sweep: measured lost work against Young's and Daly's model.
#include <algorithm>
#include <iostream>
#include <vector>

#include "chapters/15_production_training/recovery.h"
#include "chapters/15_production_training/stage_failures.h"
#include "common/table.h"
#include "common/timer.h"

namespace book::prod::stage {

SweepResult run_interval_sweep(const FailuresOptions& o) {
  SweepResult result;
  if (o.sweep.empty()) return result;
  std::cout << "\n### How often to checkpoint: measured against the model\n\n";
  FailuresOptions run_options = o;
  run_options.steps = o.sweep_steps;
  run_options.faults = o.sweep_faults;
  run_options.kinds = {"kill"};  // the same kills at the same steps for every K
  const std::size_t n = o.sweep.size();
  std::vector<std::vector<double>> lost(n);
  std::vector<double> redone(n), written(n);
  std::vector<double> step_seconds, checkpoint_seconds;
  for (int rep = 0; rep < o.sweep_repeats; ++rep)
    for (std::size_t i = 0; i < n; ++i) {  // interleaved: every K sees the same machine load
      run_options.every = o.sweep[i];
      run_options.seed = o.seed + rep;  // one schedule per repetition, the same for every K
      SupervisorOptions s = supervisor_options(run_options, results_dir() + "/ch15_sweep");
      s.checkpoint_delay_s = o.sweep_delay_ms / 1000;
      const SupervisedRun run = supervise(s);
      lost[i].push_back(run.redone_seconds + run.checkpoint_seconds);
      redone[i] += double(run.log.steps_redone) / o.sweep_repeats;
      written[i] += double(run.checkpoints.size()) / o.sweep_repeats;
      double steps = 0;
      for (const StepRecord& r : run.log.steps) steps += r.seconds;
      step_seconds.push_back(steps / static_cast<double>(run.log.steps.size()));
      if (!run.checkpoints.empty())
        checkpoint_seconds.push_back(run.checkpoint_seconds /
                                     static_cast<double>(run.checkpoints.size()));
    }
  // The model's inputs, measured: one step's time s and one checkpoint's δ (medians over runs).
  const double s = median(step_seconds), delta = median(checkpoint_seconds);
  const double work = static_cast<double>(o.sweep_steps) * s;
  const double mtbf = work / o.sweep_faults;
  result.young_steps = young_interval(delta, mtbf) / s;
  result.daly_steps = daly_interval(delta, mtbf) / s;
  Table table({"K (steps)", "checkpoints", "steps redone", "measured lost s (mean)", "spread",
               "model lost s", "model: checkpoints + rework s"});
  double best = -1;
  for (std::size_t i = 0; i < n; ++i) {
    double measured = 0;  // the mean over schedules: the model's expectation is a mean too
    for (double l : lost[i]) measured += l / double(lost[i].size());
    const LostWork model =
        expected_lost_work(work, static_cast<double>(o.sweep[i]) * s, delta, o.sweep_faults);
    if (best < 0 || measured < best) best = measured, result.measured_best = o.sweep[i];
    result.intervals += (i ? ", " : "") + std::to_string(o.sweep[i]);
    table.add_row({std::to_string(o.sweep[i]), fixed(written[i], 1), fixed(redone[i], 1),
                   fixed(measured, 3), fixed(100 * relative_spread(lost[i]), 0) + "%",
                   fixed(model.total(), 3),
                   fixed(model.checkpoint_seconds, 3) + " + " + fixed(model.rework_seconds, 3)});
  }
  std::cout << table.markdown() << "\n";
  table.write_csv(results_dir() + "/ch15_sweep.csv");
  std::cout << "storage:  each checkpoint write slowed by " << fixed(o.sweep_delay_ms, 0)
            << " ms (--sup-sweep-delay-ms), as a big model's write takes many steps\n"
            << "measured: a step " << fixed(1e3 * s, 2) << " ms, a checkpoint (delta) "
            << fixed(1e3 * delta, 2) << " ms; " << o.sweep_faults << " kills in " << o.sweep_steps
            << " steps: MTBF " << fixed(mtbf, 3) << " s\n"
            << "optimum:   measured K = " << result.measured_best
            << "; Young sqrt(2 delta MTBF) = " << fixed(result.young_steps, 1) << " steps, Daly "
            << fixed(result.daly_steps, 1)
            << " steps (the model assumes failures uniform within an interval; the measurement "
               "averages "
            << o.sweep_repeats << " seeded schedule(s))\n";
  return result;
}

}  // namespace book::prod::stage
