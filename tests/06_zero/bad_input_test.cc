// Scaffolding: bad options are refused before anything is allocated, each with a message that
// names the value and what to do: an unknown stage, a stage for the wrong trainer, a stage number
// out of range, a batch the ranks do not divide, more ranks than parameters, ranks that disagree,
// a broken sharded checkpoint.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

#include "chapters/03_collectives/threads.h"
#include "chapters/04_training_baseline/checkpoint.h"
#include "chapters/06_zero/sharding.h"
#include "chapters/06_zero/zero3_trainer.h"
#include "chapters/06_zero/zero_trainer.h"
#include "common/testing/expect_error.h"
#include "tests/04_training_baseline/checkpoint_bytes.h"
#include "tests/04_training_baseline/seam_options.h"
#include "tests/06_zero/tiny_zero.h"

namespace book::zero {
namespace {

using testing::tiny_zero_options;
using train::testing::read_bytes;
using train::testing::read_section;
using train::testing::replace_section;

TEST(BadInput, StageNames) {
  EXPECT_EQ(parse_stage("2"), Stage::kZero2);
  EXPECT_EQ(parse_stage("zero1"), Stage::kZero1);
  EXPECT_EQ(parse_stage("ddp"), Stage::kDdp);
  book::testing::expect_error([] { parse_stage("4"); },
                              {"unknown ZeRO stage '4'", "valid: 0 or ddp"});
  book::testing::expect_error([] { parse_stage("fsdp"); }, "unknown ZeRO stage 'fsdp'");
}

TEST(BadInput, StagesOutsideZeroToThree) {
  ZeroOptions o = tiny_zero_options(Stage::kZero3);
  o.stage = static_cast<Stage>(7);
  book::testing::expect_error([&] { resolve(o, 2); }, "ZeRO stage 7 does not exist");
}

// Issue 36: ZeRO never called TrainOptions::optimizer (nor the activation policy or the attention
// kernel): refused, by name, for every stage.
TEST(BadInput, TrainOptionSeamsItDoesNotImplement) {
  for (Stage stage : {Stage::kDdp, Stage::kZero1, Stage::kZero2, Stage::kZero3})
    for (int seam = 0; seam < 3; ++seam) {
      ZeroOptions o = tiny_zero_options(stage);
      o.train = train::testing::with_seam(o.train, seam);
      book::testing::expect_error([&] { resolve(o, 2); },
                                  {"chapter 6's ZeRO", train::testing::kSeams[seam]});
    }
}

TEST(BadInput, BatchNotDivisibleByRanks) {
  book::testing::expect_error([] { resolve(tiny_zero_options(Stage::kZero1), 5); },
                              {"12 sequences is not divisible by 5 ranks", "e.g. 15"});
}

TEST(BadInput, MoreRanksThanParameters) {
  ZeroOptions o = tiny_zero_options(Stage::kZero2);
  o.train.micro_batch = 1 << 16;  // let the batch divide: the parameter count is the limit
  const std::size_t psi = train::ParameterLayout(resolve(o, 1).train.model).total();
  const int n = static_cast<int>(psi) * 2;
  o.train.micro_batch = n;
  book::testing::expect_error([&] { resolve(o, n); }, {std::to_string(n) + " ranks but only " +
                                                           std::to_string(psi) + " parameters",
                                                       "use at most " + std::to_string(psi)});
}

TEST(BadInput, RanksWithDifferentOptions) {
  book::testing::expect_error(
      [] {
        coll::run_ranks(2, [](coll::Communicator& comm) {
          ZeroOptions o = tiny_zero_options(comm.rank() == 0 ? Stage::kZero1 : Stage::kZero2);
          ZeroTrainer trainer(comm, o);
        });
      },
      "the options of rank(s) 1 differ from rank 0's");
}

// Each trainer runs its own stages, and says which trainer runs the other.
TEST(BadInput, StageForTheWrongTrainer) {
  coll::run_ranks(1, [](coll::Communicator& comm) {
    book::testing::expect_error(
        [&] { ZeroTrainer trainer(comm, tiny_zero_options(Stage::kZero3)); },
        {"ZeroTrainer runs stages 0, 1 and 2", "Zero3Trainer"});
    book::testing::expect_error(
        [&] { Zero3Trainer trainer(comm, tiny_zero_options(Stage::kZero1)); },
        {"Zero3Trainer runs stage 3 only", "got stage 1"});
  });
}

// A sharded checkpoint with a missing or corrupted shard, or of another model, is refused with a
// message naming what is wrong.
TEST(BadInput, BrokenShardedCheckpoints) {
  const std::string dir =
      std::string(std::getenv("TEST_TMPDIR") ? std::getenv("TEST_TMPDIR") : "/tmp") + "/bad_ckpt";
  std::filesystem::remove_all(dir);
  const ZeroOptions options = tiny_zero_options(Stage::kZero1);
  coll::run_ranks(2, [&](coll::Communicator& comm) {
    ZeroTrainer trainer(comm, options);
    trainer.step();
    trainer.save(dir);
  });
  auto load = [&](const ZeroOptions& o) {
    coll::run_ranks(2, [&](coll::Communicator& comm) {
      ZeroTrainer trainer(comm, o);
      trainer.load(dir);
    });
  };
  ZeroOptions other = options;
  other.train.model.d_model = 32;
  book::testing::expect_error([&] { load(other); }, {"is of another model", "d_model 16"});
  const std::string shard1 = committed_shard_path(dir, 1);
  {  // flip one byte of shard 1
    std::fstream f(shard1, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(40);
    f.put('\x5a');
  }
  book::testing::expect_error([&] { load(options); }, {"shard 1", "is corrupted"});
  book::testing::expect_error([&] { verify_sharded_checkpoint(dir); }, {"shard 1", "is corrupted"});
  std::filesystem::remove(shard1);
  book::testing::expect_error([&] { load(options); }, {"shard 1 of 2", "is missing"});
  std::filesystem::remove(dir + "/manifest.ckpt");
  book::testing::expect_error([&] { load(options); }, "no manifest.ckpt");
}

TEST(BadInput, ParameterCountsWhoseBytesWrapAreRefused) {
  // Issue 19: 8 bytes of Adam state × 2^61 parameters = 2^64 read 0, and total() wrapped.
  book::testing::expect_error(
      [] { model_state_bytes(Stage::kDdp, DType::kBF16, std::size_t{1} << 61, 1); },
      {"model_state_bytes: 2305843009213693952 parameters is above 2^59", "overflow 64 bits"});
  book::testing::expect_error([] { model_state_bytes(Stage::kZero1, DType::kBF16, 10, 11); },
                              "a rank owns 11 of 10 parameters");
  // 2^59 is the largest priced: 16 · 2^59 = 2^63 bytes, exactly.
  EXPECT_EQ(model_state_bytes(Stage::kDdp, DType::kBF16, std::size_t{1} << 59, 1).total(),
            std::uint64_t{1} << 63);
}

// Damages shard `r` of `dir` and records its new checksum in the manifest, as a save would have.
template <typename T>
void replace_in_shard(const std::string& dir, int r, const std::string& name,
                      const std::vector<T>& value) {
  const std::string shard = committed_shard_path(dir, r);
  replace_section(shard, name, value);
  auto sums = read_section<std::uint64_t>(dir + "/manifest.ckpt", "shard_checksums");
  sums[r] = train::fnv1a64(read_bytes(shard));
  replace_section(dir + "/manifest.ckpt", "shard_checksums", sums);
}

// ZeRO's loader skipped chapter 4's checks and was not all-or-nothing: reshard wrote the live
// pieces before a bad loss scale threw; shards = -1 or a piece with end < begin ended in
// std::length_error or bad_alloc. Each is now a book::Error and the trainer is unchanged.
TEST(BadInput, DamagedShardedCheckpointsAreRefusedAndChangeNothing) {
  const std::string tmp = std::getenv("TEST_TMPDIR") ? std::getenv("TEST_TMPDIR") : "/tmp";
  const std::string good = tmp + "/zero_good", bad = tmp + "/zero_bad";
  std::filesystem::remove_all(good);
  const ZeroOptions options = tiny_zero_options(Stage::kZero1);
  coll::run_ranks(2, [&](coll::Communicator& comm) {
    ZeroTrainer trainer(comm, options);
    trainer.step();
    trainer.step();
    trainer.save(good);
  });
  auto refused = [&](auto damage, std::initializer_list<std::string> words) {
    std::filesystem::remove_all(bad);
    std::filesystem::copy(good, bad);
    damage();
    coll::run_ranks(2, [&](coll::Communicator& comm) {
      ZeroTrainer trainer(comm, options);
      trainer.step();
      const std::vector<float> before = trainer.master_weights();
      book::testing::expect_error([&] { trainer.load(bad); }, words);
      EXPECT_EQ(trainer.steps_done(), 1) << words.begin()[0] << ": the step changed";
      EXPECT_EQ(trainer.master_weights(), before) << words.begin()[0] << ": the weights changed";
    });
  };
  const std::string manifest = bad + "/manifest.ckpt";
  auto in_manifest = [&](const std::string& name, auto value) {
    return [=] { replace_section(manifest, name, value); };
  };
  refused(in_manifest("shards", std::vector<std::int32_t>{-1}),
          {"names -1 shards and holds 2 checksums"});
  refused(in_manifest("step", std::vector<std::int64_t>{-1}), {"step -1 and Adam's step 2"});
  refused(in_manifest("adam_step", std::vector<std::int64_t>{9}), {"step 2 and Adam's step 9"});
  refused(in_manifest("data_rng", std::vector<std::uint64_t>(4, 0)), {"all zeros"});
  // Resharding succeeds here; the scale is refused after it, and must still change nothing.
  refused(in_manifest("loss_scale", std::vector<float>{-1.0f}),
          {"sharded checkpoint " + bad, "scale -1"});
  refused(
      [&] {
        auto pieces = read_section<std::uint64_t>(committed_shard_path(bad, 1), "pieces");
        std::swap(pieces[0], pieces[1]);  // end < begin
        replace_in_shard(bad, 1, "pieces", pieces);
      },
      {"shard 1's piece [", "is not a range of the"});
  refused(
      [&] {
        auto master = read_section<float>(committed_shard_path(bad, 0), "master");
        master[2] = std::numeric_limits<float>::infinity();
        replace_in_shard(bad, 0, "master", master);
      },
      {"shard 0: section 'master' holds inf at element 2"});
  refused(
      [&] {
        auto v = read_section<float>(committed_shard_path(bad, 1), "adam_v");
        v[0] = -1.0f;
        replace_in_shard(bad, 1, "adam_v", v);
      },
      {"shard 1: section 'adam_v' holds -1 at element 0", "a finite value >= 0"});
}

TEST(BadInput, SettingsThatCanOnlyDivergeAreRefusedUpFront) {
  ZeroOptions o = tiny_zero_options(Stage::kZero3);
  o.train.adamw.epsilon = std::numeric_limits<float>::quiet_NaN();
  book::testing::expect_error([&] { resolve(o, 2); },
                              "epsilon must be positive and finite, got nan");
}

// local_batch(task, rng, DistributedSampler({8, 8, 2}, 1), 4) took rows 4-7 of a 4-row batch.
TEST(BadInput, LocalBatchRefusesASamplerLargerThanTheMicroBatch) {
  const train::AdditionTask task(2);
  Rng rng(7);
  const ddp::DistributedSampler sampler({.dataset_size = 8, .global_batch = 8, .world_size = 2}, 1);
  book::testing::expect_error(
      [&] { local_batch(task, rng, sampler, 4); },
      {"local_batch", "dataset of 8", "micro-batch has 4", "dataset_size = micro_batch"});
}

// Every rank's error after a NaN is planted in rank 1's weights, or "" if its step went through.
struct DivergedRun {
  std::vector<std::string> errors = std::vector<std::string>(2);
  std::vector<std::int64_t> steps = std::vector<std::int64_t>(2);
};

void expect_stopped_at_step_2(const DivergedRun& run) {
  for (int r = 0; r < 2; ++r) {
    EXPECT_NE(run.errors[r].find("step 2: the training loss is nan (f32)"), std::string::npos)
        << "rank " << r << ": " << run.errors[r];
    EXPECT_NE(run.errors[r].find("the run has diverged"), std::string::npos) << run.errors[r];
    EXPECT_EQ(run.steps[r], 1) << "rank " << r << ": the refused step must not be counted";
  }
}

TEST(BadInput, ARunThatDivergesStopsOnEveryRankNamingTheStep) {
  // The loss and the gradients' finiteness are all-reduced, so a NaN on one rank stops every
  // rank at the same step, before any update (it used to skip the step silently, forever).
  constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
  for (const Stage stage : {Stage::kZero1, Stage::kZero2}) {
    SCOPED_TRACE(stage_name(stage));
    DivergedRun run;
    std::vector<std::vector<float>> before(2), after(2);
    coll::run_ranks(2, [&](coll::Communicator& comm) {
      ZeroTrainer trainer(comm, tiny_zero_options(stage));
      trainer.step();
      if (comm.rank() == 1)
        trainer.model().params()[trainer.model().layout().find("lnf_gain").offset] = kNaN;
      before[comm.rank()] = trainer.master_weights();
      try {
        trainer.step();
      } catch (const Error& e) {
        run.errors[comm.rank()] = e.what();
      }
      after[comm.rank()] = trainer.master_weights();
      run.steps[comm.rank()] = trainer.steps_done();
    });
    expect_stopped_at_step_2(run);
    EXPECT_EQ(std::memcmp(before[0].data(), after[0].data(), before[0].size() * sizeof(float)), 0)
        << "the refused step changed the master weights";
  }
  DivergedRun run;
  coll::run_ranks(2, [&](coll::Communicator& comm) {
    Zero3Trainer trainer(comm, tiny_zero_options(Stage::kZero3));
    trainer.step();
    if (comm.rank() == 1) trainer.master_pieces().front()[0] = kNaN;  // gathered next forward
    try {
      trainer.step();
    } catch (const Error& e) {
      run.errors[comm.rank()] = e.what();
    }
    run.steps[comm.rank()] = trainer.steps_done();
  });
  expect_stopped_at_step_2(run);
}

}  // namespace
}  // namespace book::zero
