// The report's definitions (report.h) on hand-made logs whose every number is worked out here,
// and each refusal of a log that cannot be judged.
#include <gtest/gtest.h>

#include "chapters/15_production_training/report.h"
#include "common/testing/expect_error.h"

namespace book::prod {
namespace {

using book::testing::expect_error;

// Four useful steps of 0.5 s and 1000 tokens each, on 2 ranks, in a 10 s job that was down 1 s
// after a restart that threw away 3 step executions; evaluations at steps 2 and 4.
RunLog four_steps() {
  RunLog log;
  log.name = "ddp";
  log.ranks = 2;
  log.model_flops_per_token = 1e6;
  log.hardware_flops_per_token = 1.5e6;  // recomputation: half the forward again, say
  for (int s = 1; s <= 4; ++s) log.steps.push_back({s, 3.0 - 0.5 * s, 0.5, 1000, 2.0 * s});
  log.evals = {{2, 4.5, 2.2}, {4, 9.5, 1.4}};
  log.wall_seconds = 10;
  log.down_seconds = 1;
  log.restarts = 1;
  log.steps_redone = 3;
  return log;
}

TEST(Report, EveryNumberHasOneDefinition) {
  ReportOptions options;
  options.target_loss = 1.5;
  options.loss_at = {1, 4};
  options.peak_gflops = 4;  // 4e9 FLOP/s
  const RunReport r = summarize(four_steps(), options);
  EXPECT_EQ(r.steps, 4);
  EXPECT_DOUBLE_EQ(r.tokens_per_s, 4000.0 / 2.0);  // useful tokens over useful step time
  EXPECT_DOUBLE_EQ(r.tokens_per_s_per_rank, 1000.0);
  EXPECT_DOUBLE_EQ(r.mfu, 2000.0 * 1e6 / 4e9);  // 0.5
  EXPECT_DOUBLE_EQ(r.hfu, 2000.0 * 1.5e6 / 4e9);
  EXPECT_EQ(r.converge_steps, 4);  // 2.2 at step 2 is above 1.5; 1.4 at step 4 is not
  EXPECT_DOUBLE_EQ(r.converge_seconds, 9.5);
  EXPECT_EQ(r.restarts, 1);
  EXPECT_EQ(r.steps_redone, 3);
  EXPECT_DOUBLE_EQ(r.uptime, 0.9);
  EXPECT_DOUBLE_EQ(r.goodput, 2.0 / 10.0);
  ASSERT_EQ(r.loss_at.size(), 2u);
  EXPECT_EQ(r.loss_at[0].first, 1);
  EXPECT_DOUBLE_EQ(r.loss_at[0].second, 2.5);
  EXPECT_DOUBLE_EQ(r.loss_at[1].second, 1.0);
}

TEST(Report, HfuEqualsMfuWithoutRecomputationAndConvergenceCanBeMissed) {
  RunLog log = four_steps();
  log.hardware_flops_per_token = 0;
  ReportOptions options;
  options.target_loss = 1.0;  // never reached
  options.peak_gflops = 4;
  const RunReport r = summarize(log, options);
  EXPECT_DOUBLE_EQ(r.hfu, r.mfu);
  EXPECT_EQ(r.converge_steps, -1);
  EXPECT_LT(r.converge_seconds, 0);
}

TEST(Report, RefusesLogsThatCannotBeJudged) {
  ReportOptions options;
  options.peak_gflops = 4;
  RunLog empty = four_steps();
  empty.steps.clear();
  expect_error([&] { summarize(empty, options); }, {"no steps"});
  RunLog twice = four_steps();
  twice.steps[2].step = 2;
  expect_error([&] { summarize(twice, options); }, {"step 2", "once each, in order"});
  RunLog no_wall = four_steps();
  no_wall.wall_seconds = 0;
  expect_error([&] { summarize(no_wall, options); }, {"wall time"});
  RunLog down = four_steps();
  down.down_seconds = 11;
  expect_error([&] { summarize(down, options); }, {"down time"});
  RunLog negative = four_steps();
  negative.steps[1].seconds = -1;
  expect_error([&] { summarize(negative, options); }, {"step 2", "negative"});
  expect_error([&] { summarize(four_steps(), ReportOptions{}); }, {"peak"});
  ReportOptions beyond = options;
  beyond.loss_at = {5};
  expect_error([&] { summarize(four_steps(), beyond); }, {"no step 5", "ran 4"});
}

TEST(Report, TheTableShowsEveryRunsLossesSideBySide) {
  ReportOptions options;
  options.peak_gflops = 4;
  options.loss_at = {1, 4};
  RunReport a = summarize(four_steps(), options);
  options.loss_at = {2};
  RunReport b = summarize(four_steps(), options);
  b.name = "supervised";
  const Table table = report_table({a, b});
  const std::vector<std::string>& columns = table.columns();
  ASSERT_EQ(columns.size(), 13u + 3u) << "the four layers, then loss @1, @2, @4";
  EXPECT_EQ(columns[13], "loss @1");
  EXPECT_EQ(columns[14], "loss @2");
  EXPECT_EQ(columns[15], "loss @4");
  ASSERT_EQ(table.rows().size(), 2u);
  EXPECT_EQ(table.rows()[0][13], "2.5000");
  EXPECT_EQ(table.rows()[0][14], "-") << "run a did not ask for step 2";
  EXPECT_EQ(table.rows()[0][15], "1.0000");
  EXPECT_EQ(table.rows()[1][0], "supervised");
  EXPECT_EQ(table.rows()[1][13], "-");
  EXPECT_EQ(table.rows()[1][14], "2.0000");
  EXPECT_EQ(table.rows()[1][7], "50.0%") << "MFU";
  EXPECT_EQ(table.rows()[1][11], "90.0%") << "uptime";
  expect_error([&] { report_table({}); }, {"no runs"});
}

}  // namespace
}  // namespace book::prod
