// Issue 36: a sharded save is atomic as a whole. A save whose write fails on any rank, or a process
// killed at any point before the manifest's rename, leaves the folder loading as the previous
// checkpoint, bit for bit; killed after the rename, it loads as the new one; the next save removes
// what a killed one left.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "chapters/03_collectives/threads.h"
#include "chapters/06_zero/zero_trainer.h"
#include "common/testing/expect_error.h"
#include "tests/06_zero/tiny_zero.h"

namespace book::zero {
namespace {

namespace fs = std::filesystem;
using testing::tiny_zero_options;

constexpr int kRanks = 2;

std::string fresh_dir(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string dir = std::string(tmp ? tmp : "/tmp") + "/" + name;
  fs::remove_all(dir);
  return dir;
}

// The master weights after `steps` steps from the start (and saved into `dir` when given).
std::vector<float> train_steps(const ZeroOptions& o, int steps, const std::string& dir = "") {
  std::vector<float> weights;
  coll::run_ranks(kRanks, [&](coll::Communicator& comm) {
    ZeroTrainer trainer(comm, o);
    for (int i = 0; i < steps; ++i) trainer.step();
    if (!dir.empty()) trainer.save(dir);
    std::vector<float> w = trainer.master_weights();
    if (comm.rank() == 0) weights = std::move(w);
  });
  return weights;
}

struct Loaded {
  std::vector<float> weights;
  std::int64_t step = 0;
};

Loaded load(const ZeroOptions& o, const std::string& dir) {
  Loaded out;
  coll::run_ranks(kRanks, [&](coll::Communicator& comm) {
    ZeroTrainer trainer(comm, o);
    trainer.load(dir);
    std::vector<float> w = trainer.master_weights();
    if (comm.rank() == 0) out = {std::move(w), trainer.steps_done()};
  });
  return out;
}

// The files of `dir` whose names contain `part`.
int files_with(const std::string& dir, const std::string& part) {
  int n = 0;
  for (const auto& entry : fs::directory_iterator(dir))
    n += entry.path().filename().string().find(part) != std::string::npos;
  return n;
}

TEST(AtomicCheckpoint, AWriteThatFailsOnAnyRankLeavesThePreviousCheckpoint) {
  const ZeroOptions o = tiny_zero_options(Stage::kZero1);
  for (int failing = 0; failing < kRanks; ++failing) {
    SCOPED_TRACE("rank " + std::to_string(failing) + "'s write fails");
    const std::string dir = fresh_dir("atomic_write_" + std::to_string(failing));
    const std::vector<float> first = train_steps(o, 1, dir);  // generation 1, committed
    // Generation 2's temporary file for this rank is a directory: its write_atomically fails.
    fs::create_directories(dir + "/shard-" + std::to_string(failing) + ".g2.ckpt.tmp");
    book::testing::expect_error(
        [&] { train_steps(o, 2, dir); },
        {"writing the shards failed on rank " + std::to_string(failing),
         "the checkpoint committed before it is untouched"});
    const Loaded back = load(o, dir);
    EXPECT_EQ(back.step, 1);
    EXPECT_EQ(back.weights, first) << "the previous checkpoint, bit for bit";
    EXPECT_EQ(files_with(dir, ".g2."), 0) << "the failed generation's files are removed";
    // The next save works and is the one that loads.
    const std::vector<float> third = train_steps(o, 3, dir);
    EXPECT_EQ(load(o, dir).weights, third);
  }
}

TEST(AtomicCheckpoint, AManifestThatCannotBeWrittenCommitsNothing) {
  const ZeroOptions o = tiny_zero_options(Stage::kZero2);
  const std::string dir = fresh_dir("atomic_manifest");
  const std::vector<float> first = train_steps(o, 1, dir);
  fs::create_directories(dir + "/manifest.ckpt.tmp");
  book::testing::expect_error([&] { train_steps(o, 2, dir); },
                              "committing the manifest failed on rank 0");
  const Loaded back = load(o, dir);
  EXPECT_EQ(back.step, 1);
  EXPECT_EQ(back.weights, first);
}

TEST(AtomicCheckpoint, AFolderThatIsAFileOrEmptyIsRefusedOnEveryRank) {
  const ZeroOptions o = tiny_zero_options(Stage::kZero1);
  const std::string file = fresh_dir("atomic_is_a_file");
  { std::ofstream(file) << "not a folder"; }
  book::testing::expect_error([&] { train_steps(o, 1, file); },
                              {"preparing the folder failed on rank 0", "is a file, not a folder"});
  book::testing::expect_error([&] {
    coll::run_ranks(kRanks, [&](coll::Communicator& comm) { ZeroTrainer(comm, o).save(""); });
  }, "preparing the folder failed on rank 0");
}

// The process dies at `point` during a save of step 2 over a committed step 1 (a forked child,
// std::_Exit: no destructor, no cleanup); the folder must then load as `expected_step`.
void crash_and_load(SaveCrashPoint point, int expected_step, const std::string& name) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const ZeroOptions o = tiny_zero_options(Stage::kZero1);
  const std::string dir = fresh_dir(name);
  const std::vector<float> first = train_steps(o, 1, dir);
  EXPECT_EXIT(
      {
        crash_sharded_save_at(point);
        train_steps(o, 2, dir);
      },
      ::testing::ExitedWithCode(kSaveCrashExitCode), "");
  // What the kill left beside the committed checkpoint is not part of it: it verifies.
  EXPECT_NO_THROW(verify_sharded_checkpoint(dir));
  const std::vector<float> expected = expected_step == 1 ? first : train_steps(o, 2);
  const Loaded back = load(o, dir);
  EXPECT_EQ(back.step, expected_step);
  EXPECT_EQ(back.weights, expected) << "bit for bit";
  // The next save commits a new generation and removes everything else.
  const std::vector<float> third = train_steps(o, 3, dir);
  EXPECT_EQ(load(o, dir).weights, third);
  EXPECT_EQ(files_with(dir, ".g1."), 0) << "the old generation is pruned after the commit";
  EXPECT_EQ(files_with(dir, "shard-"), kRanks) << "one generation's shards, nothing a kill left";
  EXPECT_EQ(files_with(dir, ".tmp"), 0);
}

TEST(AtomicCheckpoint, KilledAfterPreparingLoadsThePreviousStep) {
  crash_and_load(SaveCrashPoint::kAfterPrepare, 1, "atomic_crash_prepare");
}

TEST(AtomicCheckpoint, KilledAfterTheShardsLoadsThePreviousStep) {
  crash_and_load(SaveCrashPoint::kAfterShards, 1, "atomic_crash_shards");
}

TEST(AtomicCheckpoint, KilledAfterTheCommitLoadsTheNewStep) {
  crash_and_load(SaveCrashPoint::kAfterCommit, 2, "atomic_crash_commit");
}

}  // namespace
}  // namespace book::zero
