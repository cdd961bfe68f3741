// Scaffolding: stability. A rank that fails mid-run makes the others stop with an error naming it
// (no hang); restarting every rank from the last atomic checkpoint ends with exactly the weights of
// a run that never failed; ranks started with different options, or holding different weights,
// are refused. Links the reference exercise bodies, so it passes on both tracks.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "chapters/03_collectives/threads.h"
#include "chapters/04_training_baseline/trainer.h"
#include "chapters/05_data_parallel/ddp_trainer.h"
#include "chapters/05_data_parallel/restart.h"
#include "common/testing/expect_error.h"
#include "tests/05_data_parallel/tiny_run.h"

namespace book::ddp {
namespace {

using book::testing::expect_error;
using testing::tiny_ddp_options;
using testing::tiny_train_options;

std::string temp_path(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/" + name;
}

TEST(Stability, AFailingRankStopsTheOthersWithAClearError) {
  for (Rung rung : {Rung::kFlat, Rung::kNoSync}) {
    DdpOptions options = tiny_ddp_options(rung);
    options.faults.fail_rank = 1;
    options.faults.fail_step = 3;
    std::vector<std::string> errors(3);
    std::vector<std::int64_t> steps_done(3, -1);
    coll::ThreadsOptions threads;
    threads.timeout = std::chrono::milliseconds(20000);  // a hang would fail here, not block
    expect_error(
        [&] {
          coll::run_ranks(
              3,
              [&](coll::Communicator& comm) {
                DdpTrainer trainer(comm, options);
                try {
                  for (int s = 0; s < 5; ++s) trainer.step();
                } catch (const Error& e) {
                  errors[comm.rank()] = e.what();
                  steps_done[comm.rank()] = trainer.steps_done();
                  throw;
                }
              },
              threads);
        },
        "injected failure: rank 1 stops at step 3");
    EXPECT_EQ(steps_done[1], 2) << rung_name(rung) << ": rank 1 failed before step 3 began";
    for (int r : {0, 2}) {
      EXPECT_NE(errors[r].find("rank 1 failed"), std::string::npos)
          << rung_name(rung) << ": rank " << r
          << " must say which rank failed, said: " << errors[r];
      // It stops inside step 3, at its gradient all-reduce: a step that did not go through is
      // not counted (as chapter 4's Trainer counts), so a restart redoes it.
      EXPECT_EQ(steps_done[r], 2) << rung_name(rung) << ": rank " << r
                                  << " stopped inside step 3, which must not be counted";
    }
  }
}

//! [restart_test]
TEST(Stability, RestartFromTheLastCheckpointEndsWithTheSameWeights) {
  RestartOptions options;
  options.ddp = tiny_ddp_options(Rung::kNoSync);
  options.world_size = 2;
  options.steps = 7;
  options.checkpoint_every = 2;
  options.checkpoint_path = temp_path("restart.ckpt");
  const RestartReport clean = train_with_restarts(options);
  EXPECT_EQ(clean.restarts, 0);
  ASSERT_EQ(clean.final_weights.size(),
            train::ParameterLayout(resolve(options.ddp, 2).train.model).total());

  options.ddp.faults.fail_rank = 1;
  options.ddp.faults.fail_step = 6;  // after the checkpoint of step 4
  const RestartReport failed = train_with_restarts(options);
  EXPECT_EQ(failed.restarts, 1);
  ASSERT_EQ(failed.failures.size(), 1u);
  EXPECT_NE(failed.failures[0].find("injected failure: rank 1 stops at step 6"), std::string::npos)
      << failed.failures[0];
  EXPECT_EQ(failed.resumed_from, (std::vector<std::int64_t>{4}));
  EXPECT_EQ(std::memcmp(failed.final_weights.data(), clean.final_weights.data(),
                        clean.final_weights.size() * sizeof(float)),
            0)
      << "resumed from the checkpoint of step 4, the run must end bit for bit where the "
         "uninterrupted one did";
  EXPECT_EQ(failed.losses, clean.losses) << "every step's loss, bit for bit";

  options.ddp.faults.fail_step = 1;  // before any checkpoint: start again from scratch
  const RestartReport early = train_with_restarts(options);
  EXPECT_EQ(early.resumed_from, (std::vector<std::int64_t>{0}));
  EXPECT_EQ(std::memcmp(early.final_weights.data(), clean.final_weights.data(),
                        clean.final_weights.size() * sizeof(float)),
            0);
}
//! [restart_test]

TEST(Stability, ACheckpointOfTheRunLoadsIntoChapter4sTrainer) {
  const std::string path = temp_path("ddp_to_trainer.ckpt");
  const DdpOptions options = tiny_ddp_options(Rung::kBuckets);
  std::vector<float> weights;
  coll::run_ranks(2, [&](coll::Communicator& comm) {
    DdpTrainer trainer(comm, options);
    for (int s = 0; s < 3; ++s) trainer.step();
    trainer.save(path);
    if (comm.rank() == 0)
      weights.assign(trainer.master_weights().begin(), trainer.master_weights().end());
  });
  train::Trainer one(options.train);
  one.load(path);
  EXPECT_EQ(one.steps_done(), 3);
  EXPECT_EQ(
      std::memcmp(one.model().params().data(), weights.data(), weights.size() * sizeof(float)), 0)
      << "chapter 4's Trainer reads the data-parallel run's weights";
}

TEST(Stability, RanksWithDifferentOptionsOrWeightsAreRefused) {
  expect_error(
      [] {
        coll::run_ranks(2, [](coll::Communicator& comm) {
          DdpOptions options = tiny_ddp_options(Rung::kFlat);
          if (comm.rank() == 1) options.train.seed += 1;  // a rank launched with another seed
          DdpTrainer trainer(comm, options);
        });
      },
      {"the options of rank(s) 1 differ from rank 0's", "start every rank with the same"});
  expect_error(
      [] {
        coll::run_ranks(3, [](coll::Communicator& comm) {
          DdpOptions options = tiny_ddp_options(Rung::kNoSync);
          if (comm.rank() == 2) options.bucket_bytes *= 2;
          DdpTrainer trainer(comm, options);
        });
      },
      "the options of rank(s) 2 differ from rank 0's");
  // Two checkpoints of different runs; rank 1 loads the other one.
  const std::string a = temp_path("a.ckpt"), b = temp_path("b.ckpt");
  coll::run_ranks(2, [&](coll::Communicator& comm) {
    DdpTrainer trainer(comm, tiny_ddp_options(Rung::kFlat));
    trainer.save(a);
    trainer.step();
    trainer.save(b);
  });
  expect_error(
      [&] {
        coll::run_ranks(2, [&](coll::Communicator& comm) {
          DdpTrainer trainer(comm, tiny_ddp_options(Rung::kFlat));
          trainer.load(comm.rank() == 1 ? b : a);
        });
      },
      {"the parameters of rank(s) 1 differ from rank 0's", "the same checkpoint on every rank"});
}

}  // namespace
}  // namespace book::ddp
