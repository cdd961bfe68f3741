// Graded: prod.checkpoint_interval (Young's interval) and prod.restart_plan (where to resume after
// a failure, and what it costs), on cases worked out by hand, and their refusals.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "chapters/15_production_training/recovery.h"
#include "common/testing/exercise.h"
#include "common/testing/expect_error.h"

namespace book::prod {
namespace {

using book::testing::expect_error;

EXERCISE_TEST("prod.checkpoint_interval", CheckpointInterval, YoungByHand) {
  // δ = 50 s, MTBF = 20000 s: √(2·50·20000) = √2 000 000 = 1414.2136 s.
  EXPECT_NEAR(young_interval(50, 20000), 1414.2136, 1e-3) << "delta 50 s, MTBF 20000 s";
  // A 60 s checkpoint and a failure a day: √(2·60·86400) = √10 368 000 = 3219.94 s (53.7 min).
  EXPECT_NEAR(young_interval(60, 86400), 3219.9379, 1e-3) << "delta 60 s, MTBF 86400 s";
  // Four times the failure rate halves the interval.
  EXPECT_NEAR(young_interval(60, 86400 / 4.0), 3219.9379 / 2, 1e-3) << "MTBF / 4";
}

EXERCISE_TEST("prod.checkpoint_interval", CheckpointInterval, RefusesWhatHasNoOptimum) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  expect_error([] { young_interval(0, 100); }, "checkpoint cost must be");
  expect_error([] { young_interval(-1, 100); }, "checkpoint cost must be");
  expect_error([&] { young_interval(nan, 100); }, "checkpoint cost must be");
  expect_error([] { young_interval(5, 0); }, "MTBF must be");
  expect_error([&] { young_interval(5, inf); }, "MTBF must be");
}

// A plan's four numbers, for the failure messages.
void expect_plan(const RestartPlan& p, std::int64_t resume, std::int64_t first, std::int64_t last,
                 std::int64_t lost, const char* what) {
  EXPECT_EQ(p.resume_from, resume) << what;
  EXPECT_EQ(p.first_redo, first) << what;
  EXPECT_EQ(p.last_redo, last) << what;
  EXPECT_EQ(p.steps_lost, lost) << what;
}

EXERCISE_TEST("prod.restart_plan", RestartPlan, NewestVerifiedCheckpoint) {
  const std::vector<CheckpointOnDisk> good = {{5, true}, {10, true}};
  expect_plan(restart_plan(good, 13), 10, 11, 12, 2,
              "checkpoints 5, 10 (both good), failure in step 13: resume at 10, redo 11..12");
  expect_plan(restart_plan(good, 11), 10, 11, 10, 0,
              "failure in step 11, just after the checkpoint of 10: nothing lost");
  const std::vector<CheckpointOnDisk> unordered = {{10, true}, {5, true}, {15, false}};
  expect_plan(restart_plan(unordered, 16), 10, 11, 15, 5,
              "checkpoints 10, 5, 15 (15 corrupt), failure in step 16: resume at 10");
}

EXERCISE_TEST("prod.restart_plan", RestartPlan, CorruptNewestFallsBack) {
  const std::vector<CheckpointOnDisk> on_disk = {{5, true}, {10, false}};
  expect_plan(restart_plan(on_disk, 13), 5, 6, 12, 7,
              "checkpoint 10 does not verify, failure in step 13: resume at 5, redo 6..12");
  const std::vector<CheckpointOnDisk> all_bad = {{5, false}, {10, false}};
  expect_plan(restart_plan(all_bad, 13), 0, 1, 12, 12,
              "no checkpoint verifies, failure in step 13: from scratch, redo 1..12");
}

EXERCISE_TEST("prod.restart_plan", RestartPlan, FromScratch) {
  expect_plan(restart_plan({}, 4), 0, 1, 3, 3, "no checkpoint, failure in step 4: redo 1..3");
  expect_plan(restart_plan({}, 1), 0, 1, 0, 0, "failure in step 1: nothing was done, none lost");
}

EXERCISE_TEST("prod.restart_plan", RestartPlan, RefusesInconsistentInput) {
  expect_error([] { restart_plan({}, 0); }, "steps are 1-based");
  expect_error([] { restart_plan({}, -3); }, "steps are 1-based");
  const std::vector<CheckpointOnDisk> newer = {{5, true}, {13, true}};
  expect_error([&] { restart_plan(newer, 13); }, "not older than the failure at step 13");
  const std::vector<CheckpointOnDisk> negative = {{-5, true}};
  expect_error([&] { restart_plan(negative, 13); }, "a checkpoint of step -5");
  const std::vector<CheckpointOnDisk> zero = {{0, true}};
  expect_error([&] { restart_plan(zero, 13); }, "a checkpoint of step 0");
  const std::vector<CheckpointOnDisk> twice = {{5, true}, {5, false}};
  expect_error([&] { restart_plan(twice, 13); }, "two checkpoints of step 5");
}

}  // namespace
}  // namespace book::prod
