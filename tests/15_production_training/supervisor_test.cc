// Scaffolding: the supervisor survives every kind of injected failure with nothing lost and
// nothing done twice (the final weights equal an uninterrupted run's bit for bit; the redone
// steps are counted and equal restart_plan's prediction), and refuses what it cannot supervise.
// Also the lost-work model and Daly's interval. Links the reference restart_plan: it passes on
// both tracks.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "chapters/03_collectives/threads.h"
#include "chapters/05_data_parallel/ddp_trainer.h"
#include "chapters/06_zero/zero_trainer.h"
#include "chapters/15_production_training/checkpoint_folder.h"
#include "chapters/15_production_training/recovery.h"
#include "chapters/15_production_training/supervisor.h"
#include "common/testing/expect_error.h"

namespace book::prod {
namespace {

using book::testing::expect_error;

std::string temp_dir(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/" + name;
}

// 2 layers, d_model 16, 2-digit addition, 8 sequences per global micro-batch: milliseconds a step.
SupervisorOptions tiny(const std::string& dir, std::int64_t steps, std::int64_t every) {
  SupervisorOptions o;
  o.ddp.train.model.n_layer = 2;
  o.ddp.train.model.n_head = 2;
  o.ddp.train.model.d_model = 16;
  o.ddp.train.digits = 2;
  o.ddp.train.micro_batch = 8;
  o.ddp.train.total_steps = 40;
  o.ddp.train.warmup_steps = 2;
  o.ddp.train.seed = 15;
  o.ddp.rung = ddp::Rung::kFlat;
  o.ranks = 2;
  o.steps = steps;
  o.checkpoint_every = every;
  o.checkpoint_dir = temp_dir(dir);
  o.heartbeat_timeout_s = 1.5;
  return o;
}

// The same run with no supervisor and no checkpoint: the weights to match.
std::vector<float> uninterrupted(const SupervisorOptions& o) {
  std::vector<float> weights;
  coll::run_ranks(o.ranks, [&](coll::Communicator& comm) {
    ddp::DdpTrainer trainer(comm, o.ddp);
    for (std::int64_t s = 0; s < o.steps; ++s) trainer.step();
    if (comm.rank() == 0)
      weights.assign(trainer.master_weights().begin(), trainer.master_weights().end());
  });
  return weights;
}

bool bit_equal(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

TEST(Supervisor, EveryKindOfFailureLosesNothingAndRedoesWhatThePlanSays) {
  SupervisorOptions o = tiny("every_fault", 16, 3);  // checkpoints after 3, 6, 9, 12, 15
  o.faults = {{FaultKind::kKill, 4, 1},              // resume at 3: nothing lost
              {FaultKind::kHang, 8, 1},              // resume at 6: step 7 redone
              {FaultKind::kCorruptNewest, 13, 0},    // 12 corrupt, resume at 9: 10..12 redone
              {FaultKind::kDiskFull, 14, 0}};        // the write of 15 fails, resume at 12: 13..15
  const SupervisedRun run = supervise(o);
  EXPECT_TRUE(bit_equal(run.final_weights, uninterrupted(o)))
      << "after 4 failures the weights must equal an uninterrupted run's bit for bit";
  ASSERT_EQ(run.failures.size(), 4u);
  EXPECT_EQ(run.log.restarts, 4);
  const std::int64_t resumed[] = {3, 6, 9, 12}, failed[] = {4, 8, 13, 16}, lost[] = {0, 1, 3, 3};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(run.failures[i].failed_step, failed[i])
        << "failure " << i << ": " << run.failures[i].cause;
    EXPECT_EQ(run.failures[i].plan.resume_from, resumed[i]) << "failure " << i;
    EXPECT_EQ(run.failures[i].plan.steps_lost, lost[i]) << "failure " << i;
  }
  EXPECT_EQ(run.predicted_redone, 7);
  EXPECT_EQ(run.log.steps_redone, 7) << "redone step executions, counted, must equal the plan's";
  EXPECT_NE(run.failures[0].cause.find("rank 1 kill at step 4"), std::string::npos)
      << run.failures[0].cause;
  EXPECT_NE(run.failures[1].cause.find("rank 1 hang at step 8"), std::string::npos)
      << run.failures[1].cause;
  EXPECT_TRUE(run.failures[1].detected_by.find("no heartbeat") != std::string::npos ||
              run.failures[1].detected_by.find("timed out") != std::string::npos)
      << "a hang is noticed by the watchdog or a collective's timeout, was: "
      << run.failures[1].detected_by;
  EXPECT_EQ(run.failures[2].unverified, std::vector<std::int64_t>{12})
      << "the corrupted newest checkpoint must not verify";
  EXPECT_NE(run.failures[3].error.find("No space left on device"), std::string::npos)
      << run.failures[3].error;
  ASSERT_EQ(run.log.steps.size(), 16u);
  for (std::int64_t s = 1; s <= 16; ++s) EXPECT_EQ(run.log.steps[s - 1].step, s);
  for (const auto& entry : std::filesystem::directory_iterator(o.checkpoint_dir))
    EXPECT_NE(entry.path().extension(), ".tmp")
        << "a failed write must leave no temporary: " << entry.path();
  EXPECT_GT(run.log.down_seconds, 0);
  EXPECT_LE(run.log.down_seconds, run.log.wall_seconds);
}

TEST(Supervisor, ACleanRunHasNoRestartsAndKeepsTheNewestCheckpoints) {
  SupervisorOptions o = tiny("clean", 7, 2);
  o.keep_checkpoints = 2;
  const SupervisedRun run = supervise(o);
  EXPECT_TRUE(bit_equal(run.final_weights, uninterrupted(o)));
  EXPECT_EQ(run.log.restarts, 0);
  EXPECT_EQ(run.log.steps_redone, 0);
  EXPECT_EQ(run.checkpoints.size(), 3u) << "after steps 2, 4, 6";
  const std::vector<CheckpointOnDisk> on_disk = verify_checkpoints(o.checkpoint_dir);
  ASSERT_EQ(on_disk.size(), 2u) << "keep_checkpoints = 2";
  EXPECT_EQ(on_disk[0].step, 4);
  EXPECT_EQ(on_disk[1].step, 6);
  EXPECT_TRUE(on_disk[0].verified && on_disk[1].verified);
}

TEST(Supervisor, AZeroRunRestartsOnFewerRanksByResharding) {
  SupervisorOptions o = tiny("zero_fewer", 8, 2);
  o.zero = true;
  o.restart_ranks = 1;                    // the lost node is not replaced
  o.faults = {{FaultKind::kKill, 5, 1}};  // 2 ranks wrote the checkpoint of 4; 1 rank loads it
  const SupervisedRun run = supervise(o);
  ASSERT_EQ(run.failures.size(), 1u);
  EXPECT_EQ(run.failures[0].plan.resume_from, 4);
  EXPECT_EQ(run.log.steps.size(), 8u);
  // The same path by hand: ZeRO-1 on 2 ranks for 4 steps, saved; loaded on 1 rank, 4 more.
  zero::ZeroOptions z;
  z.train = o.ddp.train;
  z.stage = zero::Stage::kZero1;
  z.bucket_bytes = o.ddp.bucket_bytes;
  const std::string dir = temp_dir("zero_by_hand");
  std::filesystem::remove_all(dir);
  coll::run_ranks(2, [&](coll::Communicator& comm) {
    zero::ZeroTrainer trainer(comm, z);
    for (int s = 0; s < 4; ++s) trainer.step();
    trainer.save(dir);
  });
  std::vector<float> expected;
  coll::run_ranks(1, [&](coll::Communicator& comm) {
    zero::ZeroTrainer trainer(comm, z);
    trainer.load(dir);
    for (int s = 0; s < 4; ++s) trainer.step();
    expected = trainer.master_weights();
  });
  EXPECT_TRUE(bit_equal(run.final_weights, expected))
      << "the supervisor must resume the 2-rank checkpoint on 1 rank, resharded";
}

TEST(Supervisor, SoakModeStopsAtACheckpointAfterTheDeadline) {
  SupervisorOptions o = tiny("soak", std::int64_t{1} << 40, 4);
  o.stop_after_s = 0.3;
  std::vector<std::string> lines;
  o.progress = [&](const std::string& line) { lines.push_back(line); };
  o.progress_every_s = 0;  // a line after every step
  const SupervisedRun run = supervise(o);
  const auto steps = static_cast<std::int64_t>(run.log.steps.size());
  EXPECT_GE(steps, 4);
  EXPECT_EQ(steps % 4, 0) << "every rank stops together, at a checkpoint";
  EXPECT_EQ(run.checkpoints.size() * 4, run.log.steps.size());
  EXPECT_GE(run.log.wall_seconds, 0.3);
  ASSERT_EQ(static_cast<std::int64_t>(lines.size()), steps);
  EXPECT_EQ(lines[0].rfind("progress: step 1, loss ", 0), 0u) << lines[0];
}

TEST(Supervisor, RefusesWhatItCannotSupervise) {
  SupervisorOptions o = tiny("refusals", 6, 2);
  const auto with = [&](auto change) {
    SupervisorOptions changed = o;
    change(changed);
    return [changed] { supervise(changed); };
  };
  // A folder that cannot be written is refused before any training (even as root: /proc, and a
  // folder under a regular file).
  expect_error(with([](SupervisorOptions& c) { c.checkpoint_dir = "/proc/book_ch15"; }),
               "checkpoint directory /proc/book_ch15");
  const std::string file = temp_dir("a_file");
  std::ofstream(file) << "not a folder\n";
  expect_error(with([&](SupervisorOptions& c) { c.checkpoint_dir = file + "/sub"; }),
               "give a folder the run can write");
  expect_error(with([](SupervisorOptions& c) { c.checkpoint_every = 0; }),
               "checkpoint interval must be >= 1 step, got 0");
  expect_error(with([](SupervisorOptions& c) { c.checkpoint_every = -2; }),
               "checkpoint interval must be >= 1 step, got -2");
  expect_error(with([](SupervisorOptions& c) { c.restart_ranks = 3; }),
               "restart_ranks 3 must be within 0..2");
  expect_error(with([](SupervisorOptions& c) { c.checkpoint_delay_s = -1; }),
               "checkpoint delay must be >= 0 s");
  expect_error(with([](SupervisorOptions& c) { c.heartbeat_timeout_s = 0; }),
               "heartbeat timeout must be > 0 s");
  expect_error(with([](SupervisorOptions& c) { c.heartbeat_timeout_s = 1e-7; }),
               {"heartbeat timeout 1e-07 s is shorter than one step", "several steps"});
  expect_error(with([](SupervisorOptions& c) {
                 c.faults = {{FaultKind::kKill, 9, 0}};
               }),
               "kill fault at step 9 on rank 0 is outside the run");
  expect_error(with([](SupervisorOptions& c) {
                 c.faults = {{FaultKind::kKill, 2, 5}};
               }),
               "outside the run");
  expect_error(with([](SupervisorOptions& c) {
                 c.steps = 7;
                 c.faults = {{FaultKind::kDiskFull, 7, 0}};
               }),
               "disk-full fault at step 7 never strikes");
  // Two failures, one restart allowed: the supervisor gives up, naming the last failure.
  expect_error(with([](SupervisorOptions& c) {
                 c.max_restarts = 1;
                 c.faults = {{FaultKind::kKill, 2, 1}, {FaultKind::kKill, 5, 0}};
               }),
               {"gave up after 1 restarts (max_restarts 1)", "at step 5: rank 0 kill at step 5"});
}

TEST(Faults, SeededNamedAndRefused) {
  const auto a = seeded_faults(7, 3, 20, 4, {FaultKind::kKill, FaultKind::kHang});
  EXPECT_EQ(a.size(), 3u);
  const auto b = seeded_faults(7, 3, 20, 4, {FaultKind::kKill, FaultKind::kHang});
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].step, b[i].step) << "the same seed draws the same schedule";
    EXPECT_EQ(a[i].rank, b[i].rank);
    EXPECT_TRUE(a[i].step >= 2 && a[i].step <= 20 && a[i].rank >= 0 && a[i].rank < 4);
    if (i > 0) {
      EXPECT_LT(a[i - 1].step, a[i].step) << "distinct steps, in order";
    }
  }
  EXPECT_EQ(hang_verdict(3, {9, 9}), "hung: no heartbeat for 3 s; ranks 0, 1 stopped after step 9");
  EXPECT_EQ(hang_verdict(1.5, {4, 3, 4}),
            "hung: no heartbeat for 1.5 s; rank 1 stopped after step 3");
  EXPECT_EQ(parse_fault("disk-full"), FaultKind::kDiskFull);
  EXPECT_STREQ(fault_name(FaultKind::kCorruptNewest), "corrupt");
  expect_error([] { parse_fault("meteor"); }, "unknown fault 'meteor'");
  expect_error([] { seeded_faults(1, 5, 5, 2, {FaultKind::kKill}); }, "do not fit");
  expect_error([] { seeded_faults(1, 1, 5, 2, {}); }, "no kinds of fault");
}

TEST(LostWork, ModelDalyAndTheirRefusals) {
  // 3600 s of work, checkpoints every 600 s costing 10 s, 2 failures: 6·10 = 60 s writing,
  // 2·300 = 600 s redone.
  const LostWork lost = expected_lost_work(3600, 600, 10, 2);
  EXPECT_DOUBLE_EQ(lost.checkpoint_seconds, 60);
  EXPECT_DOUBLE_EQ(lost.rework_seconds, 600);
  EXPECT_DOUBLE_EQ(lost.total(), 660);
  // The model's minimum is Young's interval (MTBF = work / failures = 1800 s: √(2·10·1800) =
  // 189.7).
  const double best = young_interval(10, 1800);
  EXPECT_NEAR(best, 189.7367, 1e-3);
  for (double factor : {0.8, 0.95, 1.05, 1.25})
    EXPECT_LT(expected_lost_work(3600, best, 10, 2).total(),
              expected_lost_work(3600, best * factor, 10, 2).total())
        << "Young's interval must beat " << factor << " times it";
  // Daly, δ = 50 s, MTBF = 20000 s: r = δ/2M = 0.00125; 1414.2136·(1 + √r/3 + r/9) − 50 = 1381.08.
  EXPECT_NEAR(daly_interval(50, 20000), 1381.0766, 1e-3);
  EXPECT_DOUBLE_EQ(daly_interval(300, 100), 100) << "delta >= 2 MTBF: checkpoint every MTBF";
  expect_error([] { daly_interval(0, 10); }, "daly_interval: the checkpoint cost must be");
  expect_error([] { expected_lost_work(0, 1, 1, 1); }, "the work must be");
  expect_error([] { expected_lost_work(10, -1, 1, 1); }, "the interval must be");
  expect_error([] { expected_lost_work(10, 1, 1, -1); }, "failures must be finite and >= 0");
}

}  // namespace
}  // namespace book::prod
