// Exercises prod.checkpoint_interval and prod.restart_plan: write them from
// chapters/15_production_training/recovery.h.
//
// young_interval: refuse a checkpoint cost or MTBF that is not finite and > 0, then return
// sqrt(2 * checkpoint_seconds * mtbf_seconds). restart_plan: refuse failed_step < 1, a checkpoint
// step < 1, one at or after failed_step, or a step given twice; then resume from the largest
// verified step (0 if none), redo resume + 1 .. failed_step - 1. Test:
// bazel test --config=exercises //tests/15_production_training:recovery_test
#include "chapters/15_production_training/recovery.h"

#include "common/check.h"

namespace book::prod {

double young_interval(double checkpoint_seconds, double mtbf_seconds) {
  (void)checkpoint_seconds, (void)mtbf_seconds;
  BOOK_NOT_IMPLEMENTED(
      "prod.checkpoint_interval", "exercises/15_production_training/recovery.cc",
      "chapters/15_production_training/README.md, section How often to checkpoint");
}

RestartPlan restart_plan(std::span<const CheckpointOnDisk> checkpoints, std::int64_t failed_step) {
  (void)checkpoints, (void)failed_step;
  BOOK_NOT_IMPLEMENTED("prod.restart_plan", "exercises/15_production_training/recovery.cc",
                       "chapters/15_production_training/README.md, section Where to resume");
}

}  // namespace book::prod
