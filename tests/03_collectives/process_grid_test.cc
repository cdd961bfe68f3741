// Scaffolding: the process grid. Coordinates and group membership checked against the rank formula
// written out again here (rank = tp + T·(dp + D·pp); ep blocks of consecutive dp coordinates), a
// collective inside every group, pipeline neighbours, and degrees that do not fit the world.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "chapters/03_collectives/process_grid.h"
#include "chapters/03_collectives/testing/collective_testing.h"
#include "common/testing/expect_error.h"

namespace book::coll {
namespace {

// The coordinates of `rank`, decoded independently of process_grid.cc.
struct Place {
  int tp, dp, pp, e, b;
};
Place place_of(int rank, const GridDegrees& g) {
  const int tp = rank % g.tp, dp = (rank / g.tp) % g.dp, pp = rank / (g.tp * g.dp);
  return {tp, dp, pp, dp % g.ep, dp / g.ep};
}

// The world ranks that should share `me`'s group of `kind`, in the group's rank order.
std::vector<int> expected_members(const std::string& kind, int me, const GridDegrees& g) {
  const int n = g.dp * g.tp * g.pp;
  const Place p = place_of(me, g);
  std::vector<std::pair<int, int>> members;  // (order in the group, world rank)
  for (int r = 0; r < n; ++r) {
    const Place q = place_of(r, g);
    if (kind == "tp" && q.dp == p.dp && q.pp == p.pp) members.push_back({q.tp, r});
    if (kind == "dp" && q.tp == p.tp && q.pp == p.pp) members.push_back({q.dp, r});
    if (kind == "pp" && q.tp == p.tp && q.dp == p.dp) members.push_back({q.pp, r});
    if (kind == "ep" && q.tp == p.tp && q.pp == p.pp && q.b == p.b) members.push_back({q.e, r});
    if (kind == "expert_dp" && q.tp == p.tp && q.pp == p.pp && q.e == p.e)
      members.push_back({q.b, r});
  }
  std::sort(members.begin(), members.end());
  std::vector<int> ranks;
  for (const auto& [order, r] : members) ranks.push_back(r);
  return ranks;
}

std::string text(const GridDegrees& g) {
  return "dp=" + std::to_string(g.dp) + " tp=" + std::to_string(g.tp) +
         " pp=" + std::to_string(g.pp) + " ep=" + std::to_string(g.ep);
}

// Builds the grid on every rank and checks each group: its members (all-gathered world ranks),
// this rank's rank in it, and an all-reduce of seeded values (the sum over exactly those ranks).
void check_grid(const GridDegrees& g) {
  const int n = g.dp * g.tp * g.pp;
  run_ranks(n, [&](Communicator& world) {
    ProcessGrid grid(world, g);
    const int me = world.rank();
    const Place p = place_of(me, g);
    const std::string where = text(g) + " world rank " + std::to_string(me);
    const GridCoordinates& c = grid.coordinates();
    EXPECT_EQ(c.tp, p.tp) << where;
    EXPECT_EQ(c.dp, p.dp) << where;
    EXPECT_EQ(c.pp, p.pp) << where;
    EXPECT_EQ(c.ep, p.e) << where;
    EXPECT_EQ(c.expert_dp, p.b) << where;
    EXPECT_EQ(ProcessGrid::world_rank_of(g, c.dp, c.tp, c.pp), me) << where;
    const std::pair<const char*, Communicator*> groups[] = {{"tp", &grid.tp()},
                                                            {"dp", &grid.dp()},
                                                            {"pp", &grid.pp()},
                                                            {"ep", &grid.ep()},
                                                            {"expert_dp", &grid.expert_dp()}};
    const int coordinate[] = {p.tp, p.dp, p.pp, p.e, p.b};
    for (int k = 0; k < 5; ++k) {
      const auto& [kind, comm] = groups[k];
      const std::vector<int> members = expected_members(kind, me, g);
      const std::string what = where + ", " + kind + " group '" + comm->group() + "'";
      ASSERT_EQ(comm->size(), static_cast<int>(members.size())) << what;
      EXPECT_EQ(comm->rank(), coordinate[k]) << what;
      EXPECT_NE(comm->group().find(std::string("/") + kind), std::string::npos) << what;
      // Which world ranks are in my group, in its order: gather them.
      std::vector<float> mine = {static_cast<float>(me)}, all(comm->size(), -1.0f);
      comm->all_gather(std::span<const float>(mine), std::span<float>(all));
      for (int i = 0; i < comm->size(); ++i)
        EXPECT_EQ(all[i], static_cast<float>(members[i])) << what << ": member " << i;
      // A reduction inside the group sums exactly its members' inputs.
      testing::TypedBuffer data = testing::rank_input(29, DType::kF32, me, 61 + k);
      comm->all_reduce(data.view(), ReduceOp::kSum);
      std::vector<double> expected(29, 0.0);
      for (int r : members) {
        const testing::TypedBuffer in = testing::rank_input(29, DType::kF32, r, 61 + k);
        for (std::size_t i = 0; i < 29; ++i) expected[i] += in.get(i);
      }
      testing::expect_close(data, expected, 0, 29, testing::tolerance(DType::kF32, comm->size()),
                            what + " all_reduce");
    }
  });
}

TEST(ProcessGrid, EightRanksTwoByTwoByTwo) {
  //! [grid_8]
  run_ranks(8, [](Communicator& world) {
    ProcessGrid grid(world, {.dp = 2, .tp = 2, .pp = 2});
    // World rank 5 = tp 1 + 2·(dp 0 + 2·pp 1): tensor-parallel with 4, data-parallel with 7,
    // the previous pipeline stage is world rank 1.
    if (world.rank() == 5) {
      EXPECT_EQ(grid.coordinates().tp, 1);
      EXPECT_EQ(grid.coordinates().dp, 0);
      EXPECT_EQ(grid.coordinates().pp, 1);
      EXPECT_TRUE(grid.is_last_stage());
    }
  });
  //! [grid_8]
  check_grid({.dp = 2, .tp = 2, .pp = 2, .ep = 1});
  check_grid({.dp = 2, .tp = 2, .pp = 2, .ep = 2});
}

TEST(ProcessGrid, TwelveRanksInSeveralShapes) {
  for (const GridDegrees& g : {GridDegrees{.dp = 12, .tp = 1, .pp = 1, .ep = 4},
                               GridDegrees{.dp = 1, .tp = 12, .pp = 1, .ep = 1},
                               GridDegrees{.dp = 1, .tp = 1, .pp = 12, .ep = 1},
                               GridDegrees{.dp = 3, .tp = 2, .pp = 2, .ep = 3},
                               GridDegrees{.dp = 2, .tp = 3, .pp = 2, .ep = 2},
                               GridDegrees{.dp = 6, .tp = 2, .pp = 1, .ep = 2},
                               GridDegrees{.dp = 2, .tp = 2, .pp = 3, .ep = 1}}) {
    SCOPED_TRACE(text(g));
    check_grid(g);
  }
}

TEST(ProcessGrid, PipelineNeighboursPassActivationsAlong) {
  const GridDegrees g{.dp = 2, .tp = 1, .pp = 3};
  run_ranks(6, [&](Communicator& world) {
    ProcessGrid grid(world, g);
    const int stage = grid.coordinates().pp;
    EXPECT_EQ(grid.is_first_stage(), stage == 0);
    EXPECT_EQ(grid.is_last_stage(), stage == 2);
    // Each stage sends its world rank forward; each stage checks who sent it.
    std::vector<float> from_previous = {-1.0f};
    const std::vector<float> mine = {static_cast<float>(world.rank())};
    if (!grid.is_first_stage())
      grid.pp().recv(std::span<float>(from_previous), grid.previous_stage(), 3);
    if (!grid.is_last_stage()) grid.pp().send(std::span<const float>(mine), grid.next_stage(), 3);
    if (!grid.is_first_stage()) {
      const int expected = ProcessGrid::world_rank_of(g, grid.coordinates().dp, 0, stage - 1);
      EXPECT_EQ(from_previous[0], static_cast<float>(expected)) << grid.describe();
    }
    if (grid.is_first_stage())
      book::testing::expect_error([&] { grid.previous_stage(); }, {"stage 0 is the first stage"});
    if (grid.is_last_stage())
      book::testing::expect_error([&] { grid.next_stage(); }, {"stage 2 is the last stage"});
  });
}

TEST(ProcessGrid, DegreesThatDoNotFitTheWorldAreRefusedOnEveryRank) {
  run_ranks(8, [](Communicator& world) {
    book::testing::expect_error([&] { ProcessGrid(world, {.dp = 2, .tp = 2, .pp = 3}); },
                                {"dp x tp x pp = 2 x 2 x 3 = 12 ranks", "the world has 8"});
    book::testing::expect_error([&] { ProcessGrid(world, {.dp = 4, .tp = 2, .pp = 1, .ep = 3}); },
                                {"ep=3 must divide dp=4"});
    book::testing::expect_error([&] { ProcessGrid(world, {.dp = 8, .tp = 0, .pp = 1}); },
                                {"every degree must be at least 1", "tp=0"});
    book::testing::expect_error([&] { ProcessGrid(world, {.dp = 8, .tp = 1, .pp = 1, .ep = -2}); },
                                {"every degree must be at least 1", "ep=-2"});
    // The refusals sent nothing: the world still works, and a good grid can be built after them.
    ProcessGrid grid(world, {.dp = 4, .tp = 2, .pp = 1, .ep = 2});
    EXPECT_EQ(grid.tp().size(), 2);
  });
  book::testing::expect_error([] { ProcessGrid::coordinates_of({.dp = 2, .tp = 2}, 4); },
                              {"world rank 4 is not in a grid of 4 ranks"});
  book::testing::expect_error([] { ProcessGrid::world_rank_of({.dp = 2, .tp = 2}, 0, 2, 0); },
                              {"(dp 0, tp 2, pp 0) is outside the grid"});
}

}  // namespace
}  // namespace book::coll
