// ZeRO-1, -2 and -3 as MPI processes (run under mpirun by mpi_test): losses equal chapter 5's DDP
// run (every process runs that too, on the same world) bit for bit in FP32 for stages 1-2 and
// within zero3_test's 1e-5 for stage 3, as on thread ranks; the model-state bytes and the bytes
// sent per step equal the formulas. Reference exercise bodies.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "chapters/03_collectives/mpi.h"
#include "chapters/05_data_parallel/ddp_trainer.h"
#include "chapters/06_zero/zero3_trainer.h"
#include "chapters/06_zero/zero_trainer.h"
#include "tests/06_zero/tiny_zero.h"

namespace book::zero {
namespace {

constexpr int kSteps = 4;

TEST(ZeroMpi, MatchesChapter5DdpWithExactBytes) {
  coll::MpiCommunicator world;
  std::vector<float> reference;
  {
    ddp::DdpTrainer ddp(world, testing::tiny_ddp_options());
    for (int s = 0; s < kSteps; ++s) reference.push_back(ddp.step().loss);
  }
  for (Stage stage : {Stage::kZero1, Stage::kZero2}) {
    for (DType precision : {DType::kF32, DType::kBF16}) {
      MemoryTracker tracker;
      ZeroTrainer trainer(world,
                          testing::tiny_zero_options(stage, testing::tiny_train_options(precision)),
                          &tracker);
      const ShardPlan& plan = trainer.plan();
      for (int s = 0; s < kSteps; ++s) {
        const float loss = trainer.step().loss;
        if (precision == DType::kF32) {  // zero tolerance, as zero_test on threads
          EXPECT_EQ(loss, reference[s])
              << stage_name(stage) << " step " << s + 1 << " rank " << world.rank();
        }
        EXPECT_EQ(trainer.last_counts().bytes_sent,
                  traffic_per_step(plan, stage, precision).bytes_sent)
            << stage_name(stage) << " " << dtype_name(precision) << " step " << s + 1;
      }
      EXPECT_EQ(trainer.measured_model_state(),
                model_state_bytes(stage, precision, plan.total, plan.owned))
          << stage_name(stage) << " " << dtype_name(precision) << " rank " << world.rank();
    }
  }
}

// ZeRO-3 over MPI: its gathers and reduce-scatters run on the AsyncCommunicator's second
// communicator (MPI_THREAD_MULTIPLE), as ZeRO-2's reduce-scatters do.
TEST(ZeroMpi, Zero3MatchesChapter5DdpWithExactBytes) {
  coll::MpiCommunicator world;
  std::vector<float> reference;
  {
    ddp::DdpTrainer ddp(world, testing::tiny_ddp_options());
    for (int s = 0; s < kSteps; ++s) reference.push_back(ddp.step().loss);
  }
  for (DType precision : {DType::kF32, DType::kBF16}) {
    const ZeroOptions options =
        testing::tiny_zero_options(Stage::kZero3, testing::tiny_train_options(precision));
    MemoryTracker tracker;
    Zero3Trainer trainer(world, options, &tracker);
    const ShardPlan& plan = trainer.plan();
    for (int s = 0; s < kSteps; ++s) {
      const float loss = trainer.step().loss;
      if (precision == DType::kF32) {  // zero3_test's tolerance: 1e-5 relative
        EXPECT_NEAR(loss, reference[s], 1e-5 * std::fabs(reference[s]))
            << "step " << s + 1 << " rank " << world.rank();
      }
      EXPECT_EQ(trainer.last_counts().bytes_sent,
                zero3_traffic_per_step(plan, precision, options.train.accumulation).bytes_sent)
          << dtype_name(precision) << " step " << s + 1;
    }
    EXPECT_EQ(trainer.measured_model_state(),
              model_state_bytes(Stage::kZero3, precision, plan.total, plan.owned))
        << dtype_name(precision) << " rank " << world.rank();
  }
}

}  // namespace
}  // namespace book::zero
