// The reference bodies of prod.checkpoint_interval and prod.restart_plan (recovery.h).
#include "chapters/15_production_training/recovery.h"

#include <cmath>

#include "common/check.h"

namespace book::prod {

//! [young_interval]
double young_interval(double checkpoint_seconds, double mtbf_seconds) {
  BOOK_CHECK(std::isfinite(checkpoint_seconds) && checkpoint_seconds > 0,
             "young_interval: the checkpoint cost must be a finite number of seconds > 0, got "
                 << checkpoint_seconds);
  BOOK_CHECK(
      std::isfinite(mtbf_seconds) && mtbf_seconds > 0,
      "young_interval: the MTBF must be a finite number of seconds > 0, got " << mtbf_seconds);
  // Lost time per second of work: δ/τ (checkpoints) + τ/(2·MTBF) (half an interval per
  // failure); its derivative −δ/τ² + 1/(2·MTBF) is zero at τ = √(2·δ·MTBF).
  return std::sqrt(2 * checkpoint_seconds * mtbf_seconds);
}
//! [young_interval]

//! [restart_plan]
RestartPlan restart_plan(std::span<const CheckpointOnDisk> checkpoints, std::int64_t failed_step) {
  BOOK_CHECK(failed_step >= 1, "restart_plan: the failure struck step "
                                   << failed_step << "; steps are 1-based (>= 1)");
  for (std::size_t i = 0; i < checkpoints.size(); ++i) {
    const std::int64_t step = checkpoints[i].step;
    BOOK_CHECK(step >= 1, "restart_plan: a checkpoint of step "
                              << step << "; a checkpoint holds at least one step (0 is 'from "
                              << "scratch', which needs no file)");
    BOOK_CHECK(step < failed_step,
               "restart_plan: the checkpoint of step "
                   << step << " is not older than the failure at step " << failed_step
                   << ": it would hold a step that never finished (inconsistent input)");
    for (std::size_t j = 0; j < i; ++j)
      BOOK_CHECK(checkpoints[j].step != step,
                 "restart_plan: two checkpoints of step " << step << "; give each once");
  }
  RestartPlan plan;
  for (const CheckpointOnDisk& c : checkpoints)
    if (c.verified && c.step > plan.resume_from) plan.resume_from = c.step;
  plan.first_redo = plan.resume_from + 1;
  plan.last_redo = failed_step - 1;
  plan.steps_lost = plan.last_redo - plan.resume_from;
  return plan;
}
//! [restart_plan]

}  // namespace book::prod
