// Scaffolding: every refusal of the chapter, with its message. Bad input is a clear book::Error
// saying what was wrong and what to do; never a crash, a hang or a wrong answer. Passes on both
// tracks: each check fires before any exercise is called.
#include <gtest/gtest.h>

#include <fstream>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

#include "chapters/03_collectives/async.h"
#include "chapters/03_collectives/threads.h"
#include "chapters/05_data_parallel/bottleneck.h"
#include "chapters/05_data_parallel/buckets.h"
#include "chapters/05_data_parallel/ddp_trainer.h"
#include "chapters/05_data_parallel/hierarchical.h"
#include "chapters/05_data_parallel/length_balance.h"
#include "chapters/05_data_parallel/reducer.h"
#include "chapters/05_data_parallel/restart.h"
#include "chapters/05_data_parallel/sampler.h"
#include "chapters/05_data_parallel/scaling_model.h"
#include "common/testing/expect_error.h"
#include "tests/04_training_baseline/seam_options.h"
#include "tests/04_training_baseline/checkpoint_bytes.h"
#include "tests/05_data_parallel/tiny_run.h"

namespace book::ddp {
namespace {

using book::testing::expect_error;
using testing::tiny_ddp_options;
using train::testing::read_section;
using train::testing::replace_section;

TEST(BadInput, ARankCountThatDoesNotDivideTheBatch) {
  expect_error([] { resolve(tiny_ddp_options(Rung::kFlat), 5); },
               {"global micro-batch of 12 sequences is not divisible by 5 ranks",
                "use a multiple of 5 (e.g. 15)"});
  expect_error(
      [] {
        coll::run_ranks(5, [](coll::Communicator& comm) {
          DdpTrainer trainer(comm, tiny_ddp_options(Rung::kNoSync));
        });
      },
      "is not divisible by 5 ranks");
  expect_error(
      [] {
        SamplerOptions o{100, 3, 4, true, 0};
        validate(o);
      },
      {"4 ranks cannot share a global batch of 3 samples", "at least 4"});
}

// Issue 36: Rung(0), Rung(5) or Algorithm(42) trained with no gradient synchronisation.
TEST(BadInput, EnumsOutsideTheirValues) {
  for (int rung : {0, 5}) {
    DdpOptions options = tiny_ddp_options(Rung::kFlat);
    options.rung = static_cast<Rung>(rung);
    expect_error([&] { resolve(options, 2); },
                 "ddp::Rung(" + std::to_string(rung) + ") is not a value of ddp::Rung (1 to 4)");
  }
  DdpOptions options = tiny_ddp_options(Rung::kFlat);
  options.algorithm = static_cast<coll::Algorithm>(42);
  expect_error([&] { resolve(options, 2); }, "coll::Algorithm(42) is not a value");
}

// Issue 36: DDP never called TrainOptions::optimizer (an SGD factory was called 0 times, the
// weights were AdamW's), and ignored the activation policy and the attention kernel: refused now.
TEST(BadInput, TrainOptionSeamsItDoesNotImplement) {
  for (int seam = 0; seam < 3; ++seam) {
    DdpOptions options = tiny_ddp_options(Rung::kFlat);
    options.train = train::testing::with_seam(options.train, seam);
    expect_error([&] { resolve(options, 2); },
                 {"chapter 5's DdpTrainer", train::testing::kSeams[seam]});
  }
}

TEST(BadInput, ABucketSizeOfZero) {
  DdpOptions options = tiny_ddp_options(Rung::kBuckets);
  options.bucket_bytes = 0;
  expect_error([&] { resolve(options, 2); }, {"bucket size 0 bytes", "25 MiB"});
  const std::vector<FlatRange> tensors = {{0, 5}, {5, 9}};
  expect_error([&] { plan_buckets(tensors, 0, 4); }, "bucket size 0 bytes");
  expect_error([&] { plan_buckets(tensors, 64, 0); }, "element size must be positive");
  const std::vector<FlatRange> gap = {{0, 5}, {6, 9}};
  expect_error([&] { plan_buckets(gap, 64, 4); }, {"tensor 1 is [6, 9)", "should start at 5"});
  expect_error([&] { plan_buckets({}, 64, 4); }, "no tensors");
}

TEST(BadInput, InjectedWrongOptimisationsWhereTheyCannotAct) {
  DdpOptions options = tiny_ddp_options(Rung::kBuckets, testing::tiny_train_options(1));
  options.faults.skip_accumulation_mean = true;
  expect_error([&] { resolve(options, 2); },
               {"skip_accumulation_mean needs accumulation >= 2", "got accumulation 1"});
  options = tiny_ddp_options(Rung::kFlat);
  options.faults.skip_last_bucket = true;
  expect_error([&] { resolve(options, 2); },
               {"skip_last_bucket needs an overlapped rung", "got rung flat"});
  options = tiny_ddp_options(Rung::kBuckets, testing::tiny_train_options(), std::size_t{1} << 30);
  options.faults.skip_last_bucket = true;
  expect_error(
      [&] { coll::run_ranks(2, [&](coll::Communicator& c) { DdpTrainer t(c, options); }); },
      {"skip_last_bucket needs at least two buckets", "the plan has 1"});
}

TEST(BadInput, MismatchedOrImpossibleRunSettings) {
  DdpOptions options = tiny_ddp_options(Rung::kFlat);
  options.train.precision = DType::kF64;
  expect_error([&] { resolve(options, 1); }, "f64 is not a training precision");
  options = tiny_ddp_options(Rung::kFlat);
  options.train.micro_batch = 0;
  expect_error([&] { resolve(options, 1); }, "micro_batch and accumulation must be >= 1, got 0");
  expect_error([] { parse_rung("bucketed"); }, {"unknown rung 'bucketed'", "per-tensor, flat"});
  EXPECT_EQ(parse_rung("3"), Rung::kBuckets);
  EXPECT_EQ(parse_rung("no-sync"), Rung::kNoSync);
}

TEST(BadInput, SettingsThatCanOnlyDivergeAreRefusedUpFront) {
  // Chapter 4's check_trainable: the same refusals as the one-device Trainer.
  DdpOptions options = tiny_ddp_options(Rung::kFlat);
  options.train.adamw.beta1 = 1.0f;
  expect_error([&] { resolve(options, 2); }, "beta1 must be in [0, 1), got 1");
  options = tiny_ddp_options(Rung::kFlat);
  options.train.clip_norm = std::numeric_limits<float>::infinity();
  expect_error([&] { resolve(options, 2); },
               "data parallel: clip_norm must be positive and finite, got inf");
  options = tiny_ddp_options(Rung::kFlat);
  options.train.max_lr = 1e3f;
  expect_error([&] { resolve(options, 2); }, "max_lr <= 1");
}

TEST(BadInput, ARunThatDivergesStopsOnEveryRankNamingTheStep) {
  // One replica's weight turns NaN (as a bad update or a bit flip would leave it). The loss is
  // all-reduced, so every rank sees NaN and every rank stops at the same step, before any update:
  // no rank trains on, none waits for a rank that stopped.
  for (const Rung rung : {Rung::kFlat, Rung::kBuckets}) {
    SCOPED_TRACE(rung_name(rung));
    std::vector<std::string> errors(2);
    std::vector<std::uint64_t> before(2), after(2);
    std::vector<std::int64_t> steps(2);
    coll::run_ranks(2, [&](coll::Communicator& comm) {
      DdpTrainer trainer(comm, tiny_ddp_options(rung));
      trainer.step();
      if (comm.rank() == 1)
        trainer.model().params()[trainer.model().layout().find("lnf_gain").offset] =
            std::numeric_limits<float>::quiet_NaN();
      before[comm.rank()] = trainer.parameter_fingerprint();
      try {
        trainer.step();
      } catch (const Error& e) {
        errors[comm.rank()] = e.what();
      }
      after[comm.rank()] = trainer.parameter_fingerprint();
      steps[comm.rank()] = trainer.steps_done();
    });
    for (int r = 0; r < 2; ++r) {
      EXPECT_NE(errors[r].find("step 2: the training loss is nan (f32)"), std::string::npos)
          << "rank " << r << ": " << errors[r];
      EXPECT_NE(errors[r].find("the run has diverged"), std::string::npos) << errors[r];
      EXPECT_EQ(before[r], after[r]) << "rank " << r << ": the refused step changed the weights";
      EXPECT_EQ(steps[r], 1) << "rank " << r << ": the refused step must not be counted";
    }
  }
}

TEST(BadInput, SamplerArguments) {
  expect_error([] { validate(SamplerOptions{0, 4, 1, true, 0}); }, "at least one sample, got 0");
  expect_error([] { validate(SamplerOptions{10, 0, 1, true, 0}); }, "at least 1 sample, got 0");
  expect_error([] { validate(SamplerOptions{10, 4, 0, true, 0}); }, "at least 1 rank, got 0");
  const SamplerOptions ok{10, 4, 2, true, 0};
  expect_error([&] { DistributedSampler(ok, 2); }, "rank 2 is outside the world of 2 ranks");
  const DistributedSampler sampler(ok, 1);
  expect_error([&] { sampler.indices(0, 3); }, "batch 3 is outside the epoch's 3 global batches");
  expect_error([&] { sampler.indices(-1, 0); }, "epoch must be >= 0, got -1");
}

TEST(BadInput, ReducerConstruction) {
  const LaunchBucket launch = [](std::size_t, const FlatRange&) {
    return coll::CollectiveHandle();
  };
  expect_error([&] { BucketReducer({}, launch); }, "there are no buckets");
  expect_error(
      [&] {
        BucketReducer({{5, 10}, {0, 4}}, launch);
      },
      {"do not tile a buffer from its end down to 0", "bucket 0"});
  expect_error([&] { BucketReducer({{5, 10}, {1, 5}}, launch); }, "bucket 1");
  expect_error([] { BucketReducer({{0, 10}}, LaunchBucket{}); }, "launch function is empty");
}

TEST(BadInput, NodesThatDoNotDivideTheWorld) {
  expect_error([] { coll::run_ranks(6, [](coll::Communicator& comm) { split_by_node(comm, 4); }); },
               "nodes of 4 ranks do not divide the world of 6 ranks");
  expect_error([] { hierarchical_cross_node_bytes(10, 4, 16, 0); }, "nodes of 0 ranks");
}

TEST(BadInput, ModelAndClassifierArguments) {
  expect_error([] { classify_bottleneck({}); }, "no ranks to classify");
  const std::vector<RankSpans> zero = {{0, 0, 0, 0}};
  expect_error([&] { classify_bottleneck(zero); }, "rank 0's step time is 0 s");
  expect_error([] { average_spans({}); }, "no steps to average");
  Workload w;
  w.flops_per_sample = 1;
  expect_error([&] { predict_step(w, Cluster{}, 0, true); }, "needs ranks >= 1");
  expect_error([] { fit_link(1, 1, 1, 2, 2); }, "needs N >= 2");
  expect_error([] { fit_link(4, 1024, 1e-3, 1 << 24, 1e-4); }, "no positive latency and bandwidth");
  expect_error([] { ring_all_reduce_seconds(0, 1, Link{}); }, "needs ranks >= 1");
}

// ranks_per_node = 0 with a hierarchical cluster computed ranks % 0 (SIGFPE); a NaN or negative
// figure, or backward_share outside [0, 1], gave NaN or nonsense efficiencies without an error.
TEST(BadInput, ScalingModelFigures) {
  Workload w;
  w.flops_per_sample = 1;
  Cluster no_nodes;
  no_nodes.ranks_per_node = 0;
  no_nodes.hierarchical = true;
  expect_error([&] { predict_step(w, no_nodes, 2, true); },
               {"predict_step", "ranks_per_node must be >= 1, got 0"});
  expect_error([&] { all_reduce_seconds(2, 64, no_nodes); },
               "all_reduce_seconds: ranks_per_node must be >= 1, got 0");
  for (double share : {-0.5, 1.5, std::numeric_limits<double>::quiet_NaN()}) {
    Workload bad = w;
    bad.backward_share = share;
    expect_error([&] { predict_step(bad, Cluster{}, 2, true); }, "backward_share");
  }
  Workload infinite = w;
  infinite.flops_per_s = std::numeric_limits<double>::infinity();
  expect_error([&] { predict_step(infinite, Cluster{}, 1, false); },
               {"must be finite", "inf FLOP/s"});
  Workload negative = w;
  negative.gradient_bytes = -8;
  expect_error([&] { predict_step(negative, Cluster{}, 2, false); },
               "gradient_bytes must be finite and >= 0, got -8");
  Cluster nan_alpha;
  nan_alpha.inter.alpha_s = std::numeric_limits<double>::quiet_NaN();
  expect_error([&] { predict_step(w, nan_alpha, 2, false); },
               "the inter-node link's alpha_s must be finite and >= 0, got nan");
  expect_error(
      [] {
        ring_all_reduce_seconds(2, 64, Link{-1e-6, 1e9});
      },
      "alpha_s must be finite and >= 0");
}

// step = inf made every share 0 and answered "compute"; a NaN data time went into std::sort.
TEST(BadInput, BottleneckSpansOutsideTheStep) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  const std::vector<RankSpans> infinite = {{0.1, 0.5, 0.1, inf}};
  expect_error([&] { classify_bottleneck(infinite); }, {"rank 0's step time is inf", "finite"});
  const std::vector<RankSpans> nan_data = {{0.1, 0.5, 0.1, 1.0}, {nan, 0.5, 0.1, 1.0}};
  expect_error([&] { classify_bottleneck(nan_data); }, "rank 1's data time is nan s");
  const std::vector<RankSpans> negative_wait = {{0.1, 0.5, -0.2, 1.0}};
  expect_error([&] { classify_bottleneck(negative_wait); },
               {"rank 0's comm_wait time is -0.2 s", "between 0 and its step time 1 s"});
  const std::vector<RankSpans> longer = {{0.1, 2.0, 0.1, 1.0}};
  expect_error([&] { classify_bottleneck(longer); }, "rank 0's compute time is 2 s");
}

// DDP's load skipped chapter 4's checks: a negative step, Adam's step above the step, a NaN
// weight and an all-zero data stream were taken; now each is refused and the trainer is unchanged.
TEST(BadInput, DamagedCheckpointsAreRefusedAndChangeNothing) {
  const std::string dir = std::getenv("TEST_TMPDIR") ? std::getenv("TEST_TMPDIR") : "/tmp";
  const std::string good = dir + "/ddp_good.ckpt", bad = dir + "/ddp_bad.ckpt";
  const DdpOptions options = tiny_ddp_options(Rung::kFlat);
  coll::run_ranks(1, [&](coll::Communicator& comm) {
    DdpTrainer trainer(comm, options);
    trainer.step();
    trainer.step();
    trainer.save(good);
  });
  auto refused = [&](const std::string& name, auto value,
                     std::initializer_list<std::string> words) {
    std::filesystem::copy_file(good, bad, std::filesystem::copy_options::overwrite_existing);
    replace_section(bad, name, value);
    coll::run_ranks(1, [&](coll::Communicator& comm) {
      DdpTrainer trainer(comm, options);
      trainer.step();
      const std::uint64_t before = trainer.parameter_fingerprint();
      expect_error([&] { trainer.load(bad); }, words);
      EXPECT_EQ(trainer.steps_done(), 1) << name << ": a refused load changed the step";
      EXPECT_EQ(trainer.parameter_fingerprint(), before) << name << ": it changed the weights";
    });
  };
  refused("step", std::vector<std::int64_t>{-1}, {"step -1 and Adam's step 2", "not counts"});
  refused("adam_step", std::vector<std::int64_t>{7}, {"step 2 and Adam's step 7", "not counts"});
  std::vector<float> weights = read_section<float>(good, "weights");
  weights[3] = std::nanf("");
  refused("weights", weights, {"section 'weights' holds nan at element 3", "diverged"});
  refused("data_rng", std::vector<std::uint64_t>(4, 0), {"data stream's state is all zeros"});
  refused("loss_scale", std::vector<float>{-1.0f}, {"checkpoint " + bad, "scale -1"});
}

TEST(BadInput, BalancingAndRestartArguments) {
  const std::vector<std::int64_t> costs = {3, -1, 2};
  expect_error([&] { split_by_cost(costs, 2); }, "sample 1 has a negative cost -1");
  expect_error([] { split_by_count(4, 0); }, "ranks must be >= 1, got 0");
  expect_error([] { max_over_mean({}); }, "no loads");
  expect_error([] { mixed_lengths(4, 1.5, 0); }, "long share must be in [0, 1], got 1.5");
  RestartOptions restart;
  restart.checkpoint_path = "x";
  restart.checkpoint_every = 0;
  expect_error([&] { train_with_restarts(restart); }, "steps and checkpoint_every must be >= 1");
  restart.checkpoint_every = 1;
  restart.checkpoint_path = "";
  expect_error([&] { train_with_restarts(restart); }, "no checkpoint path");
  // Issue 36: a folder at the path escaped as std::filesystem_error, and any file there was
  // deleted, checkpoint or not. Both are refused now, and the file is left as it was.
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string base = std::string(tmp ? tmp : "/tmp") + "/restart_paths";
  std::filesystem::remove_all(base);
  std::filesystem::create_directories(base + "/folder/inside");
  restart.checkpoint_path = base + "/folder";
  expect_error([&] { train_with_restarts(restart); }, "is a folder or another non-file");
  restart.checkpoint_path = base + "/notes.txt";
  { std::ofstream(restart.checkpoint_path) << "my notes"; }
  expect_error([&] { train_with_restarts(restart); },
               {"is not a checkpoint this run may replace", "move it or name another path"});
  EXPECT_TRUE(std::filesystem::exists(restart.checkpoint_path)) << "the file is not deleted";
}

}  // namespace
}  // namespace book::ddp
