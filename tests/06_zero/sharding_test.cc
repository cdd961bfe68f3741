// Scaffolding: the shard plan tiles the buffer; the formulas give the paper's numbers; the exact
// traffic of ZeRO-1/2 is chapter 5's ring all-reduce, rank by rank; bad plans are refused.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "chapters/05_data_parallel/gradient_sync.h"
#include "chapters/06_zero/sharding.h"
#include "common/testing/expect_error.h"

namespace book::zero {
namespace {

// Buckets of an awkward buffer of 1000 elements: 389, 300, 311 (bucket 0 at the end).
std::vector<ddp::FlatRange> awkward_buckets() { return {{611, 1000}, {311, 611}, {0, 311}}; }

TEST(Sharding, PiecesTileEveryBucketExactlyOnce) {
  for (int n : {1, 2, 3, 4, 7}) {
    std::vector<int> owner(1000, -1);
    std::size_t owned_sum = 0;
    for (int r = 0; r < n; ++r) {
      const ShardPlan plan = plan_shards(awkward_buckets(), n, r, Stage::kZero2);
      EXPECT_EQ(plan.total, 1000u);
      std::size_t offset = 0;
      for (std::size_t b = 0; b < plan.pieces.size(); ++b) {
        const ddp::FlatRange& p = plan.pieces[b];
        EXPECT_GE(p.begin, plan.buckets[b].begin) << "N=" << n << " rank " << r << " bucket " << b;
        EXPECT_LE(p.end, plan.buckets[b].end) << "N=" << n << " rank " << r << " bucket " << b;
        EXPECT_EQ(plan.offsets[b], offset) << "N=" << n << " rank " << r << " bucket " << b;
        offset += p.size();
        for (std::size_t i = p.begin; i < p.end; ++i) {
          EXPECT_EQ(owner[i], -1) << "element " << i << " owned twice (N=" << n << ")";
          owner[i] = r;
        }
      }
      EXPECT_EQ(plan.owned, offset);
      // 389 = 3·129 + 2 at N = 3: ranks 0 and 1 own 130 of bucket 0, rank 2 owns 129.
      if (n == 3) {
        EXPECT_EQ(plan.pieces[0].size(), r < 2 ? 130u : 129u);
      }
      owned_sum += plan.owned;
    }
    EXPECT_EQ(owned_sum, 1000u) << "N=" << n;
    for (std::size_t i = 0; i < owner.size(); ++i)
      ASSERT_NE(owner[i], -1) << "element " << i << " owned by no rank (N=" << n << ")";
  }
  const ShardPlan ddp_plan = plan_shards(awkward_buckets(), 4, 2, Stage::kDdp);
  EXPECT_EQ(ddp_plan.owned, 1000u) << "stage 0 owns everything on every rank";
}

TEST(Sharding, ModelStateBytesFollowTheFormulas) {
  const std::size_t psi = 1000, s = 251;
  EXPECT_EQ(model_state_bytes(Stage::kDdp, DType::kBF16, psi, psi).total(), 16 * psi);
  EXPECT_EQ(model_state_bytes(Stage::kZero1, DType::kBF16, psi, s).total(), 4 * psi + 12 * s);
  EXPECT_EQ(model_state_bytes(Stage::kZero2, DType::kF16, psi, s).total(), 2 * psi + 14 * s);
  EXPECT_EQ(model_state_bytes(Stage::kZero2, DType::kF32, psi, s).total(), 8 * psi + 8 * s);
  EXPECT_EQ(model_state_bytes(Stage::kZero1, DType::kBF16, psi, s).gradients, 2 * psi);
  EXPECT_EQ(model_state_bytes(Stage::kZero2, DType::kBF16, psi, s).gradients, 2 * s);
}

// The ZeRO paper's Figure 1: Ψ = 7.5B, N = 64, K = 12: 120 GB, 31.4 GB, 16.6 GB, 1.9 GB.
TEST(Sharding, PaperExampleNumbers) {
  const double psi = 7.5e9, n = 64, gb = 1e9;
  EXPECT_DOUBLE_EQ(paper_bytes_per_rank(Stage::kDdp, psi, n) / gb, 120.0);
  EXPECT_NEAR(paper_bytes_per_rank(Stage::kZero1, psi, n) / gb, 31.4, 0.05);
  EXPECT_NEAR(paper_bytes_per_rank(Stage::kZero2, psi, n) / gb, 16.6, 0.05);
  EXPECT_NEAR(paper_bytes_per_rank(Stage::kZero3, psi, n) / gb, 1.9, 0.05);
}

TEST(Sharding, TrafficEqualsChapter5RingAllReduceRankByRank) {
  for (int n : {1, 2, 3, 4}) {
    for (int r = 0; r < n; ++r) {
      std::uint64_t ring = 0;
      for (const auto& b : awkward_buckets())
        ring += ddp::ring_all_reduce_bytes_of_rank(b.size(), 2, n, r);
      for (Stage stage : {Stage::kDdp, Stage::kZero1, Stage::kZero2}) {
        const StepTraffic t =
            traffic_per_step(plan_shards(awkward_buckets(), n, r, stage), stage, DType::kBF16);
        EXPECT_EQ(t.bytes_sent, ring) << "N=" << n << " rank " << r << " " << stage_name(stage);
        EXPECT_EQ(t.collectives, stage == Stage::kDdp ? 3 : 6);
      }
    }
  }
}

TEST(Sharding, BadPlansAreRefused) {
  testing::expect_error([] { plan_shards(awkward_buckets(), 2, 2, Stage::kZero1); },
                        "rank 2 is outside a world of 2");
  testing::expect_error([] { plan_shards({}, 2, 0, Stage::kZero1); }, "no buckets");
  testing::expect_error(
      [] {
        plan_shards({{500, 1000}, {0, 400}}, 2, 0, Stage::kZero1);
      },
      "must tile the buffer");
  testing::expect_error(
      [] {
        plan_shards({{500, 1000}, {100, 500}}, 2, 0, Stage::kZero1);
      },
      "last bucket must start at 0");
  // Stage 3: 16 bytes per owned parameter in both precisions.
  EXPECT_EQ(model_state_bytes(Stage::kZero3, DType::kBF16, 10, 5).total(), 80u);
  EXPECT_EQ(model_state_bytes(Stage::kZero3, DType::kF32, 10, 5).total(), 80u);
}

}  // namespace
}  // namespace book::zero
