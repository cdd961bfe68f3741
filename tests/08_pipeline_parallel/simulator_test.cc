// Scaffolding tests of the schedules' data and the simulator: GPipe's bubble is the formula,
// malformed and deadlocking schedules are refused with a message that says where, bad costs and
// names are refused, and the layer helpers refuse fewer layers than stages.
#include <vector>

#include <gtest/gtest.h>

#include "chapters/08_pipeline_parallel/partition.h"
#include "chapters/08_pipeline_parallel/registry.h"
#include "chapters/08_pipeline_parallel/simulator.h"
#include "common/testing/expect_error.h"

namespace book::pp {
namespace {

TEST(GPipe, BubbleIsTheFormulaAndItHoldsEveryMicroBatch) {
  for (int p : {1, 2, 4, 8})
    for (int m : {1, 3, 8, 32}) {
      const Shape shape{p, m, 1};
      const Schedule s = gpipe_schedule(shape);
      const Timeline t = simulate(s, Costs{1, 2, 0, 0});
      EXPECT_NEAR(t.bubble_fraction(), double(p - 1) / (m + p - 1), 1e-12)
          << "p = " << p << ", m = " << m;
      EXPECT_DOUBLE_EQ(t.makespan, (m + p - 1) * 3.0);
      for (int peak : peak_in_flight(s)) EXPECT_EQ(peak, m);
    }
}

TEST(Simulator, CommunicationLatencyLengthensTheStep) {
  const Schedule s = gpipe_schedule({4, 4, 1});
  // Each of the 2(p−1) hops of the first forward and the last backward waits `comm` more.
  EXPECT_DOUBLE_EQ(simulate(s, Costs{1, 1, 0, 0.5}).makespan,
                   simulate(s, Costs{1, 1, 0, 0}).makespan + 2 * 3 * 0.5);
}

TEST(Simulator, FindsADeadlockAndSaysWhere) {
  Schedule s{"crossed", {2, 2, 1}, false, {}};
  s.ranks = {
      {{Op::kForward, 0, 0}, {Op::kBackward, 0, 0}, {Op::kForward, 1, 0}, {Op::kBackward, 1, 0}},
      {{Op::kForward, 1, 0}, {Op::kBackward, 1, 0}, {Op::kForward, 0, 0}, {Op::kBackward, 0, 0}}};
  testing::expect_error([&] { simulate(s); },
                        {"'crossed' deadlocks", "rank 0 at B0 waits for B0 of virtual stage 1",
                         "rank 1 at F1 waits for F1 of virtual stage 0"});
}

TEST(CheckSchedule, RefusesMalformedLists) {
  Schedule s = gpipe_schedule({2, 2, 1});
  std::swap(s.ranks[1][0], s.ranks[1][3]);  // B1 before F1... and F0 after B... on rank 1
  testing::expect_error([&] { check_schedule(s); }, {"rank 1", "runs before its predecessor"});
  s = gpipe_schedule({2, 2, 1});
  s.ranks[0].pop_back();
  testing::expect_error([&] { check_schedule(s); }, "rank 0 never finishes micro-batch 1");
  s = gpipe_schedule({2, 2, 1});
  s.ranks[0].push_back({Op::kWeight, 0, 0});
  testing::expect_error([&] { check_schedule(s); }, "a W in a schedule whose B computes");
  s = gpipe_schedule({2, 2, 1});
  s.ranks[0][0].micro_batch = 5;
  testing::expect_error([&] { check_schedule(s); }, "outside m = 2");
}

TEST(Simulator, RefusesBadCostsAndNames) {
  testing::expect_error(
      [] {
        simulate(gpipe_schedule({2, 2, 1}), Costs{1, -1, 0, 0});
      },
      "costs must be non-negative");
  testing::expect_error(
      [] {
        make_schedule("pipedream", {2, 2, 1});
      },
      {"unknown schedule 'pipedream'", "gpipe 1f1b interleaved zb-h1"});
  testing::expect_error([] { gpipe_schedule({2, 2, 2}); }, "use the interleaved schedule");
}

TEST(Layers, FewerLayersThanStagesIsRefused) {
  EXPECT_EQ(even_boundaries(10, 4), (std::vector<int>{0, 3, 6, 8, 10}));
  testing::expect_error([] { even_boundaries(3, 4); },
                        {"fewer layers than stages", "3 layers", "4 stages"});
  const std::vector<double> costs = {1, 2, 3};
  EXPECT_EQ(stage_costs(costs, {0, 1, 3}, 10, 100), (std::vector<double>{11, 105}));
  testing::expect_error([&] { stage_costs(costs, {0, 2, 2, 3}); }, "stage 1 is empty");
}

}  // namespace
}  // namespace book::pp
