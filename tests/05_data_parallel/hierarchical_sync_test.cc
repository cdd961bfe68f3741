// Scaffolding: DDP's hierarchical gradient sync (DdpOptions::hierarchical_ranks_per_node) gives
// the flat all-reduce's gradients and losses, within rounding (the same mean, summed in another
// order), on every rung, with the replicas bit-identical; a node size that does not divide the
// world is refused. Links the reference exercise bodies, so it passes on both tracks.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "chapters/03_collectives/threads.h"
#include "chapters/05_data_parallel/ddp_trainer.h"
#include "common/testing/expect_error.h"
#include "tests/05_data_parallel/tiny_run.h"

namespace book::ddp {
namespace {

using book::testing::expect_error;
using testing::tiny_ddp_options;

constexpr int kRanks = 4, kPerNode = 2, kSteps = 3;

// Rank 0's losses and its gradients after the first step; every rank's replica is checked
// against rank 0's after every step (verify_replicas throws otherwise).
struct SyncRun {
  std::vector<float> losses, first_gradients;
  std::uint64_t gradient_bytes = 0, gradient_messages = 0;  // rank 0, first step
};

SyncRun train_run(Rung rung, int per_node) {
  DdpOptions options = tiny_ddp_options(rung);
  options.hierarchical_ranks_per_node = per_node;
  SyncRun run;
  coll::run_ranks(kRanks, [&](coll::Communicator& comm) {
    DdpTrainer trainer(comm, options);
    for (int s = 0; s < kSteps; ++s) {
      const float loss = trainer.step().loss;
      trainer.verify_replicas();
      if (comm.rank() != 0) continue;
      run.losses.push_back(loss);
      if (s == 0) {
        const auto grads = trainer.model().grads().span();
        run.first_gradients.assign(grads.begin(), grads.end());
        run.gradient_bytes = trainer.last_times().gradient_bytes;
        run.gradient_messages = trainer.last_times().gradient_messages;
      }
    }
  });
  return run;
}

TEST(HierarchicalSync, GivesTheFlatGradientsOnEveryRung) {
  for (Rung rung : all_rungs()) {
    SCOPED_TRACE(rung_name(rung));
    const SyncRun flat = train_run(rung, 0), hierarchical = train_run(rung, kPerNode);
    ASSERT_EQ(flat.first_gradients.size(), hierarchical.first_gradients.size());
    double scale = 0, worst = 0;
    for (std::size_t i = 0; i < flat.first_gradients.size(); ++i) {
      scale = std::max(scale, std::fabs(static_cast<double>(flat.first_gradients[i])));
      worst = std::max(worst, std::fabs(static_cast<double>(flat.first_gradients[i]) -
                                        hierarchical.first_gradients[i]));
    }
    ASSERT_GT(scale, 0) << "no gradient: the test compares nothing";
    // Summed in another order: a few units in the last place of the largest gradient.
    EXPECT_LE(worst, 1e-5 * scale);
    EXPECT_EQ(flat.losses[0], hierarchical.losses[0]) << "the first loss precedes any sync";
    for (int s = 0; s < kSteps; ++s)
      EXPECT_NEAR(flat.losses[s], hierarchical.losses[s], 1e-5 * std::fabs(flat.losses[s]));
    EXPECT_GT(hierarchical.gradient_bytes, 0u) << "the node groups' bytes count as gradient bytes";
    // Per all-reduce a rank sends 2(N-1) = 6 ring messages flat, 1 + 2 + 1 = 4 hierarchically
    // (reduce-scatter and all-gather in a node of 2, a ring all-reduce across 2 nodes).
    EXPECT_EQ(hierarchical.gradient_messages * 6, flat.gradient_messages * 4);
  }
}

TEST(HierarchicalSync, RefusesNodesThatDoNotDivideTheWorld) {
  DdpOptions options = tiny_ddp_options(Rung::kFlat);
  options.hierarchical_ranks_per_node = 3;
  expect_error([&] { resolve(options, 4); },
               "nodes of 3 ranks do not divide the world of 4 ranks");
  options.hierarchical_ranks_per_node = -1;
  expect_error([&] { resolve(options, 4); }, "or 0 for one flat all-reduce");
  options.hierarchical_ranks_per_node = 4;
  EXPECT_EQ(resolve(options, 4).hierarchical_ranks_per_node, 4) << "one node: allowed";
}

}  // namespace
}  // namespace book::ddp
