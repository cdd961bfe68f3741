// Chapter 4's training run, tensor-parallel (scaffolding test, reference exercise bodies): a few
// FP32 steps of the addition task on 2 and 4 thread ranks, sequence parallelism off and on, give
// the losses and gradient norms chapter 4's one-device Trainer gives, within 2e-5 relative (the
// ranks sum in another order, in float; the stage prints the deviations it measures), and every
// replicated tensor stays bit-identical on every rank.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "chapters/03_collectives/threads.h"
#include "chapters/04_training_baseline/trainer.h"
#include "chapters/07_tensor_parallel/parallel_trainer.h"
#include "common/testing/expect_error.h"
#include "tests/04_training_baseline/seam_options.h"

namespace book::tp {
namespace {

train::TrainOptions small_run() {
  train::TrainOptions o;  // chapter 4's model: 2 layers, 4 heads, d_model 64
  o.digits = 2;           // context 8: 8 sequences are 64 tokens, split by 2 and 4
  o.micro_batch = 8;
  o.accumulation = 2;
  o.total_steps = 100;
  o.warmup_steps = 2;
  o.seed = 42;
  return o;
}

TEST(TensorParallelTrainer, StepsMatchChapter4sTrainerAndReplicasStayEqual) {
  constexpr int kSteps = 4;
  train::Trainer one_device(small_run());
  std::vector<train::StepResult> want;
  for (int i = 0; i < kSteps; ++i) want.push_back(one_device.step());
  for (int t : {2, 4})
    for (SequenceParallel sp : {SequenceParallel::kOff, SequenceParallel::kOn}) {
      SCOPED_TRACE("t = " + std::to_string(t) + ", sequence parallelism " +
                   sequence_parallel_name(sp));
      std::vector<std::vector<float>> params(t);
      std::vector<std::vector<train::StepResult>> got(t);
      std::vector<std::pair<std::size_t, std::size_t>> replicated;
      coll::run_ranks(t, [&](coll::Communicator& comm) {
        TensorParallelTrainer trainer(small_run(), comm, sp);
        for (int i = 0; i < kSteps; ++i) got[comm.rank()].push_back(trainer.step());
        params[comm.rank()].assign(trainer.model().params().begin(),
                                   trainer.model().params().end());
        if (comm.rank() == 0)
          for (const auto& slot : trainer.model().layout().slots())
            if (slot.split == train::TensorParallelSplit::kReplicated)
              replicated.emplace_back(slot.offset, slot.size());
      });
      for (int r = 0; r < t; ++r)
        for (int i = 0; i < kSteps; ++i) {
          EXPECT_NEAR(got[r][i].loss, want[i].loss, 2e-5 * want[i].loss)
              << "rank " << r << ", step " << i + 1;
          EXPECT_NEAR(got[r][i].grad_norm, want[i].grad_norm, 2e-5 * want[i].grad_norm)
              << "rank " << r << ", step " << i + 1;
          EXPECT_EQ(got[r][i].lr, want[i].lr);
        }
      // Every rank's shards have the same shapes, so a replicated tensor sits at the same offset
      // on every rank: compare those bytes with rank 0's.
      for (const auto& [offset, size] : replicated)
        for (int r = 1; r < t; ++r)
          ASSERT_EQ(std::memcmp(params[r].data() + offset, params[0].data() + offset,
                                size * sizeof(float)),
                    0)
              << "a replicated tensor (offset " << offset << ") differs on rank " << r << " after "
              << kSteps << " steps";
      EXPECT_FALSE(replicated.empty());
    }
}

TEST(TensorParallelTrainer, RefusesWhatItCannotTrain) {
  train::TrainOptions o = small_run();
  o.precision = DType::kBF16;
  coll::run_ranks(1, [&](coll::Communicator& comm) {
    book::testing::expect_error([&] { TensorParallelTrainer(o, comm, SequenceParallel::kOff); },
                                "trains in f32 only, got bf16");
    train::TrainOptions none = small_run();
    none.micro_batch = 0;
    book::testing::expect_error([&] { TensorParallelTrainer(none, comm, SequenceParallel::kOff); },
                                "micro_batch and accumulation must be >= 1, got 0 and 2");
    // Chapter 4's check_trainable: settings that can only diverge, refused before a step.
    train::TrainOptions bad = small_run();
    bad.adamw.beta2 = 1.0f;
    book::testing::expect_error([&] { TensorParallelTrainer(bad, comm, SequenceParallel::kOff); },
                                "beta2 must be in [0, 1), got 1");
    bad = small_run();
    bad.max_lr = std::numeric_limits<float>::infinity();
    book::testing::expect_error([&] { TensorParallelTrainer(bad, comm, SequenceParallel::kOff); },
                                "max_lr <= 1");
    // Issue 36: the seams it does not implement were ignored; refused, each by name.
    for (int seam = 0; seam < 3; ++seam)
      book::testing::expect_error(
          [&] {
            TensorParallelTrainer(train::testing::with_seam(small_run(), seam), comm,
                                  SequenceParallel::kOff);
          },
          {"TensorParallelTrainer", train::testing::kSeams[seam]});
    // Issue 36: SequenceParallel(7) crashed in finish_gradients.
    book::testing::expect_error(
        [&] { TensorParallelTrainer(small_run(), comm, static_cast<SequenceParallel>(7)); },
        "tp::SequenceParallel(7) is not a value of tp::SequenceParallel (0 to 1)");
  });
}

// seed = comm.rank() or another max_lr on one rank trained on garbage without an error; now every
// rank refuses, naming the ranks that differ from rank 0, before allocating anything.
TEST(TensorParallelTrainer, RanksWithDifferentOptionsAreRefusedOnEveryRank) {
  coll::run_ranks(2, [&](coll::Communicator& comm) {
    train::TrainOptions o = small_run();
    o.seed = static_cast<std::uint64_t>(comm.rank());
    book::testing::expect_error([&] { TensorParallelTrainer(o, comm, SequenceParallel::kOff); },
                                {"the options of rank(s) 1 differ from rank 0's", "same model"});
  });
  coll::run_ranks(4, [&](coll::Communicator& comm) {
    train::TrainOptions o = small_run();
    if (comm.rank() == 2) o.max_lr *= 2;
    const SequenceParallel sp = comm.rank() == 3 ? SequenceParallel::kOn : SequenceParallel::kOff;
    book::testing::expect_error([&] { TensorParallelTrainer(o, comm, sp); },
                                "the options of rank(s) 2, 3 differ from rank 0's");
  });
}

TEST(TensorParallelTrainer, ARunThatDivergesStopsOnEveryRankNamingTheStep) {
  // A NaN in one rank's shard reaches the loss every rank computes (the all-reduces carry it), so
  // every rank stops at the same step, before any update.
  std::vector<std::string> errors(2);
  std::vector<std::int64_t> steps(2);
  coll::run_ranks(2, [&](coll::Communicator& comm) {
    TensorParallelTrainer trainer(small_run(), comm, SequenceParallel::kOff);
    trainer.step();
    if (comm.rank() == 1)
      trainer.model().params()[trainer.model().layout().find("lnf_gain").offset] =
          std::numeric_limits<float>::quiet_NaN();
    const std::vector<float> before(trainer.model().params().begin(),
                                    trainer.model().params().end());
    try {
      trainer.step();
    } catch (const Error& e) {
      errors[comm.rank()] = e.what();
    }
    steps[comm.rank()] = trainer.steps_done();
    EXPECT_EQ(
        std::memcmp(before.data(), trainer.model().params().data(), before.size() * sizeof(float)),
        0)
        << "rank " << comm.rank() << ": the refused step changed the weights";
  });
  for (int r = 0; r < 2; ++r) {
    EXPECT_NE(errors[r].find("step 2: the training loss is nan (f32)"), std::string::npos)
        << "rank " << r << ": " << errors[r];
    EXPECT_EQ(steps[r], 1) << "rank " << r << ": the refused step must not be counted";
  }
}

}  // namespace
}  // namespace book::tp
