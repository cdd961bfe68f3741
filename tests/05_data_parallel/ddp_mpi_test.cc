// The data-parallel step as MPI processes (run under mpirun by mpi_test): losses within the
// stated tolerance of chapter 4's one-device run (each process runs that too), replicas
// bit-identical after every step, bytes per rank exact by the counters. Reference exercise bodies.
#include <gtest/gtest.h>

#include <cmath>

#include "chapters/03_collectives/mpi.h"
#include "chapters/05_data_parallel/ddp_trainer.h"
#include "common/testing/expect_error.h"
#include "tests/05_data_parallel/tiny_run.h"

namespace book::ddp {
namespace {

constexpr double kLossTolerance = 1e-5;  // as ddp_test: the sum's order changes, not its value

TEST(DdpMpi, MatchesChapter4AndKeepsReplicasEqual) {
  coll::MpiCommunicator world;
  const int n = world.size();
  for (Rung rung : {Rung::kFlat, Rung::kNoSync}) {
    const DdpOptions options = testing::tiny_ddp_options(rung);
    const auto one = testing::one_device_run(options.train, 6);
    DdpTrainer trainer(world, options);
    for (int s = 0; s < 6; ++s) {
      const float loss = trainer.step().loss;
      EXPECT_NEAR(loss, one.losses[s], kLossTolerance * std::fabs(one.losses[s]))
          << rung_name(rung) << " N=" << n << " rank " << world.rank() << " step " << s + 1;
      trainer.verify_replicas();  // throws if any rank's weights differ from rank 0's
      const StepTimes& t = trainer.last_times();
      std::uint64_t expected = 0;
      const int syncs = rung == Rung::kNoSync ? 1 : options.train.accumulation;
      if (rung == Rung::kFlat) {
        expected = ring_all_reduce_bytes_of_rank(trainer.model().layout().total(), sizeof(float), n,
                                                 world.rank());
      } else {
        for (const FlatRange& b : trainer.buckets())
          expected += ring_all_reduce_bytes_of_rank(b.size(), sizeof(float), n, world.rank());
      }
      EXPECT_EQ(t.gradient_bytes, expected * syncs) << rung_name(rung) << " step " << s + 1;
    }
  }
}

TEST(DdpMpi, ABatchTheRanksDoNotDivideIsRefusedOnEveryRank) {
  coll::MpiCommunicator world;
  DdpOptions options = testing::tiny_ddp_options(Rung::kNoSync);
  options.train.micro_batch = 2 * world.size() + 1;
  book::testing::expect_error([&] { DdpTrainer trainer(world, options); },
                              "is not divisible by " + std::to_string(world.size()) + " ranks");
}

}  // namespace
}  // namespace book::ddp
