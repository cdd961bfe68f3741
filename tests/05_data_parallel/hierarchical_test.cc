// Graded: ddp.hierarchical_all_reduce on 16 thread ranks cut into nodes. The result is the
// all-reduce (against a double reference), the same bits on every rank; the bytes that cross
// nodes, counted on the cross-node groups, are exactly the formula, and fewer than a flat ring's.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "chapters/03_collectives/testing/collective_testing.h"
#include "chapters/03_collectives/threads.h"
#include "chapters/05_data_parallel/hierarchical.h"
#include "common/testing/exercise.h"
#include "common/testing/expect_error.h"

namespace book::ddp {
namespace {

using coll::testing::rank_input;
using coll::testing::TypedBuffer;

constexpr int kWorld = 16;

struct RankResult {
  std::vector<float> values;
  std::uint64_t intra_sent = 0, inter_sent = 0, flat_sent = 0;
};

//! [hierarchical_test]
EXERCISE_TEST("ddp.hierarchical_all_reduce", Hierarchical, SixteenRanksInNodes) {
  for (int per_node : {4, 8, 2, 1, 16}) {
    for (std::size_t count : {1037, 4096, 7}) {
      for (coll::ReduceOp op : {coll::ReduceOp::kSum, coll::ReduceOp::kAvg}) {
        const std::string what = std::to_string(kWorld / per_node) + " nodes of " +
                                 std::to_string(per_node) + ", " +
                                 coll::testing::label(kWorld, count, DType::kF32, op);
        const auto results = coll::testing::collect_ranks(kWorld, [&](coll::Communicator& world) {
          NodeGroups groups = split_by_node(world, per_node);
          TypedBuffer data = rank_input(count, DType::kF32, world.rank(), 90);
          hierarchical_all_reduce(groups, data.view(), op);
          RankResult r;
          r.values = data.floats();
          r.intra_sent = groups.intra->counters().bytes_sent;
          r.inter_sent = groups.inter->counters().bytes_sent;
          // The flat ring on the same data, for its per-rank bytes.
          TypedBuffer flat = rank_input(count, DType::kF32, world.rank(), 90);
          world.reset_counters();
          world.all_reduce(flat.view(), op, coll::Algorithm::kRing);
          r.flat_sent = world.counters().bytes_sent;
          return r;
        });
        const auto expected = coll::testing::reference(count, DType::kF32, kWorld, 90, op);
        TypedBuffer first(count, DType::kF32);
        for (std::size_t i = 0; i < count; ++i) first.set(i, results[0].values[i]);
        coll::testing::expect_close(first, expected, 0, count,
                                    coll::testing::tolerance(DType::kF32, kWorld), what);
        std::vector<std::vector<float>> per_rank;
        std::uint64_t inter = 0, flat_crossing = 0;
        for (int r = 0; r < kWorld; ++r) {
          per_rank.push_back(results[r].values);
          inter += results[r].inter_sent;
          if (r / per_node != ((r + 1) % kWorld) / per_node) flat_crossing += results[r].flat_sent;
          // Inside the node: a reduce-scatter and an all-gather of `count`, as one ring.
          const int local = r % per_node;
          const std::uint64_t intra_expected =
              per_node == 1 ? 0
                            : (2 * count - coll::shard_of(count, per_node, local).count -
                               coll::shard_of(count, per_node, (local + 1) % per_node).count) *
                                  sizeof(float);
          EXPECT_EQ(results[r].intra_sent, intra_expected) << what << " rank " << r;
        }
        coll::testing::expect_identical_on_every_rank(per_rank, what);
        EXPECT_EQ(inter, hierarchical_cross_node_bytes(count, sizeof(float), kWorld, per_node))
            << what << ": bytes across nodes, counted on the cross-node groups";
        EXPECT_EQ(flat_crossing, flat_ring_cross_node_bytes(count, sizeof(float), kWorld, per_node))
            << what
            << ": a flat ring's bytes across nodes, counted on the ranks whose neighbour "
               "is on another node";
        if (per_node > 1 && per_node < kWorld && count >= 4096) {
          EXPECT_LT(inter, flat_crossing)
              << what << ": hierarchical sends less across nodes than a flat ring";
        }
      }
    }
  }
}
//! [hierarchical_test]

// A default NodeGroups{} has no communicators: dereferencing them crashed.
EXERCISE_TEST("ddp.hierarchical_all_reduce", Hierarchical, RefusesGroupsNotMadeBySplitByNode) {
  NodeGroups none;
  std::vector<float> data(8, 1.0f);
  book::testing::expect_error(
      [&] { hierarchical_all_reduce(none, std::span<float>(data), coll::ReduceOp::kSum); },
      {"hierarchical_all_reduce", "no communicators", "split_by_node"});
}

}  // namespace
}  // namespace book::ddp
