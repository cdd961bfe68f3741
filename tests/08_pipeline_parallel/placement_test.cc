// Scaffolding tests of the placements of a 2 × 2 grid on 2 nodes × 2 ranks (placement.h), on
// thread ranks: which groups span the nodes for each placement's order, the traffic counted in a
// tiny model's step equal to the formulas (exactly), each placement's loss equal to the same grid
// in grid order bit for bit (a permuted world must not change the math), and the refusals.
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "chapters/03_collectives/threads.h"
#include "chapters/08_pipeline_parallel/placement.h"
#include "common/testing/expect_error.h"

namespace book::pp {
namespace {

coll::ClusterLayout two_by_two() {
  coll::ClusterLayout layout;
  layout.nodes = 2, layout.ranks_per_node = 2, layout.rate = "test";
  return layout;
}

PlacementOptions tiny() {
  PlacementOptions o;
  o.config.n_layer = 2, o.config.d_model = 8, o.config.n_head = 2, o.config.vocab_size = 6;
  o.config.context = 5;
  o.micro_batches = 3, o.batch = 2, o.repetitions = 1;
  return o;
}

int node(int world_rank) { return world_rank / 2; }

TEST(Placement, SixPlacementsEachDimensionInsideOnce) {
  std::set<std::string> names;
  for (const Placement& p : placements_2x2()) {
    names.insert(p.name());
    const coll::GridDegrees d = p.degrees();
    EXPECT_EQ(d.dp * d.tp * d.pp, 4) << p.name();
    EXPECT_NE(p.inside, p.across) << p.name();
  }
  EXPECT_EQ(names.size(), 6u);
  EXPECT_EQ(placements_2x2()[0].name(), "TP inside / PP across");
}

// For every pair of grid ranks that differ in one coordinate only: the `inside` pairs share a
// node, the `across` pairs do not.
TEST(Placement, OrderPutsInsideGroupsInANodeAndAcrossGroupsOverTheLink) {
  for (const Placement& p : placements_2x2()) {
    const coll::GridDegrees d = p.degrees();
    const std::vector<int> order = p.order();
    EXPECT_EQ(std::set<int>(order.begin(), order.end()).size(), 4u) << p.name();
    for (int a = 0; a < 4; ++a)
      for (int b = a + 1; b < 4; ++b) {
        const coll::GridCoordinates ca = coll::ProcessGrid::coordinates_of(d, a);
        const coll::GridCoordinates cb = coll::ProcessGrid::coordinates_of(d, b);
        const int differ = (ca.tp != cb.tp) + (ca.dp != cb.dp) + (ca.pp != cb.pp);
        if (differ != 1) continue;
        const bool tp = ca.tp != cb.tp, dp = ca.dp != cb.dp;
        const Dim dim = tp ? Dim::kTp : dp ? Dim::kDp : Dim::kPp;
        const bool same_node = node(order[a]) == node(order[b]);
        EXPECT_EQ(same_node, dim == p.inside)
            << p.name() << ": grid ranks " << a << " and " << b << " form a " << dim_name(dim)
            << " group on world ranks " << order[a] << " and " << order[b];
      }
  }
  // The grid's own order (tp fastest) already puts TP inside: the identity.
  EXPECT_EQ(placements_2x2()[0].order(), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(placements_2x2()[1].order(), (std::vector<int>{0, 2, 1, 3}));
}

// The permuted world's rank i is world rank order[i].
TEST(Placement, PermutedWorldRanksFollowTheOrder) {
  for (const Placement& p : placements_2x2()) {
    std::vector<int> seen(4, -1);
    std::mutex mutex;
    coll::run_ranks(4, [&](coll::Communicator& world) {
      auto permuted = permuted_world(world, p);
      const std::lock_guard<std::mutex> lock(mutex);
      seen[permuted->rank()] = world.rank();
    });
    EXPECT_EQ(seen, p.order()) << p.name();
  }
}

// The whole measurement on thread ranks: traffic counted = formulas, exactly; losses = the grid
// in grid order, bit for bit.
TEST(Placement, CountedTrafficMatchesTheFormulasAndLossesAreUnchanged) {
  const PlacementOptions options = tiny();
  std::vector<PlacementResult> results;
  std::mutex mutex;
  coll::run_ranks(4, [&](coll::Communicator& world) {
    auto mine = measure_placements(world, two_by_two(), options);
    const std::lock_guard<std::mutex> lock(mutex);
    if (world.rank() == 0) results = mine;
  });
  ASSERT_EQ(results.size(), 6u);
  std::set<int> measured, predicted;
  for (const PlacementResult& r : results) {
    const std::string name = r.placement.name();
    EXPECT_EQ(r.counted.across.bytes, r.predicted.across.bytes) << name;
    EXPECT_EQ(r.counted.across.messages, r.predicted.across.messages) << name;
    EXPECT_EQ(r.counted.inside.bytes, r.predicted.inside.bytes) << name;
    EXPECT_EQ(r.counted.inside.messages, r.predicted.inside.messages) << name;
    EXPECT_GT(r.counted.across.bytes, 0u) << name;
    EXPECT_EQ(r.loss, thread_reference_loss(r.placement, options)) << name << ": not bit for bit";
    measured.insert(r.measured_rank), predicted.insert(r.predicted_rank);
  }
  EXPECT_EQ(measured, (std::set<int>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(predicted, (std::set<int>{1, 2, 3, 4, 5, 6}));
  // TP inside vs across: the same grid, the same bytes in total, only which link carries them.
  EXPECT_EQ(results[0].counted.across.bytes, results[1].counted.inside.bytes);
  EXPECT_EQ(results[0].counted.inside.bytes, results[1].counted.across.bytes);
}

TEST(Placement, RefusesAWorldThatIsNotFourRanks) {
  testing::expect_error([&] { check_2x2(3, two_by_two()); }, "need 4 ranks, got 3");
  std::mutex mutex;
  coll::run_ranks(2, [&](coll::Communicator& world) {
    testing::expect_error([&] { measure_placements(world, two_by_two(), tiny()); },
                          "need 4 ranks, got 2");
  });
}

TEST(Placement, RefusesALayoutThatIsNotTwoByTwo) {
  coll::ClusterLayout four_nodes;
  four_nodes.nodes = 4, four_nodes.ranks_per_node = 1, four_nodes.rate = "1gbit";
  testing::expect_error([&] { check_2x2(4, four_nodes); }, "4 nodes x 1 rank");
}

TEST(Placement, RefusesMismatchedGradientSizes) {
  testing::expect_error([&] { predict_traffic(placements_2x2()[0], tiny(), {100}); },
                        "1 gradient sizes for 2 pipeline stages");
}

}  // namespace
}  // namespace book::pp
