// Colocated RL memory: exact peaks of both placements on a hand-made setup, the budget never
// exceeded phase by phase, the largest KV pool that fits (one block more is refused), and a budget
// too small refused with a message naming what does not fit.
#include "chapters/09_memory_accounting/colocated_rl.h"

#include <gtest/gtest.h>

#include "common/testing/expect_error.h"

namespace book::mem {
namespace {

// Numbers small enough to check by hand: a 1000-parameter shard (16 000 B of state).
RlMemorySetup hand_made() {
  RlMemorySetup s;
  s.budget = 40'000;
  s.training_state = 16'000;
  s.training_activations = 3'000;
  s.inference_weights = 2'000;
  s.kv_bytes_per_token = 64;
  s.block_size = 16;  // 1024 B per block
  s.kv_blocks = 15;   // 15 360 B
  return s;
}

TEST(ColocatedRl, PeaksOfBothPlacementsByHand) {
  const RlMemorySetup s = hand_made();
  EXPECT_EQ(s.kv_pool(), 15'360u);
  const RlPlan colocated = run_rl_memory(s, RlPlacement::kColocated, 3);
  // Everything at once in training: 16 000 + 2 000 + 15 360 + 3 000.
  EXPECT_EQ(colocated.device_peak, 36'360u);
  EXPECT_EQ(colocated.host_peak, 0u);
  EXPECT_EQ(colocated.moved_per_cycle, 0u);
  const RlPlan sliced = run_rl_memory(s, RlPlacement::kTimeSliced, 3);
  // The larger phase: rollout 2 000 + 15 360 = 17 360 < the state at the start and in training,
  // 16 000 + 3 000 = 19 000.
  EXPECT_EQ(sliced.device_peak, 19'000u);
  EXPECT_EQ(sliced.host_peak, 16'000u);
  EXPECT_EQ(sliced.moved_per_cycle, 32'000u);
  EXPECT_EQ(sliced.sync_per_cycle, 2'000u);
  ASSERT_EQ(sliced.phases.size(), 6u);
  EXPECT_EQ(sliced.phases[0].name, "rollout 1");
  EXPECT_EQ(sliced.phases[0].device_total, 17'360u);
  EXPECT_EQ(sliced.phases[0].device.count("training state"), 0u);
  EXPECT_EQ(sliced.phases[0].host_total, 16'000u);
  EXPECT_EQ(sliced.phases[1].device.at("training state"), 16'000u);
  EXPECT_EQ(sliced.phases[1].device.count("KV pool"), 0u);
  EXPECT_EQ(sliced.phases[1].device_total, 19'000u);
}

TEST(ColocatedRl, NoPhaseExceedsTheBudget) {
  for (RlPlacement p : {RlPlacement::kColocated, RlPlacement::kTimeSliced}) {
    const RlPlan plan = run_rl_memory(hand_made(), p, 4);
    EXPECT_EQ(plan.phases.size(), 8u);
    std::uint64_t most = 0;
    for (const RlPhase& phase : plan.phases) {
      std::uint64_t sum = 0;
      for (const auto& [what, bytes] : phase.device) sum += bytes;
      EXPECT_EQ(sum, phase.device_total) << phase.name;
      EXPECT_LE(phase.device_total, hand_made().budget)
          << rl_placement_name(p) << ", " << phase.name;
      most = std::max(most, phase.device_total);
    }
    EXPECT_LE(plan.device_peak, hand_made().budget);
    EXPECT_GE(plan.device_peak, most);
  }
}

// The largest pool that fits is exact: it runs, and one block more is refused.
TEST(ColocatedRl, LargestKvPoolIsExact) {
  RlMemorySetup s = hand_made();
  // Colocated: (40 000 − 21 000) / 1024 = 18 blocks; time-sliced: (40 000 − 2 000) / 1024 = 37.
  EXPECT_EQ(max_kv_blocks(s, RlPlacement::kColocated), 18);
  EXPECT_EQ(max_kv_blocks(s, RlPlacement::kTimeSliced), 37);
  for (RlPlacement p : {RlPlacement::kColocated, RlPlacement::kTimeSliced}) {
    s.kv_blocks = max_kv_blocks(s, p);
    const RlPlan plan = run_rl_memory(s, p, 2);
    EXPECT_LE(plan.device_peak, s.budget);
    ++s.kv_blocks;
    testing::expect_error([&] { run_rl_memory(s, p, 2); }, {rl_placement_name(p), "does not fit"});
  }
  s.training_state = 39'000;  // time-slicing cannot help when training alone does not fit
  EXPECT_EQ(max_kv_blocks(s, RlPlacement::kTimeSliced), 0);
  EXPECT_EQ(max_kv_blocks(s, RlPlacement::kColocated), 0);
}

TEST(ColocatedRl, TooSmallBudgetNamesWhatDoesNotFit) {
  RlMemorySetup s = hand_made();
  s.budget = 30'000;  // colocated needs 36 360
  testing::expect_error([&] { run_rl_memory(s, RlPlacement::kColocated); },
                        {"colocated, rollout 1: the KV pool (15360 B) does not fit",
                         "18000 B of the budget 30000 B are in use", "training state 16000 B",
                         "inference weights 2000 B"});
  EXPECT_EQ(run_rl_memory(s, RlPlacement::kTimeSliced).device_peak, 19'000u);
  s.budget = 18'000;  // time-sliced: the training phase (19 000) does not fit
  testing::expect_error([&] { run_rl_memory(s, RlPlacement::kTimeSliced); },
                        {"time-sliced, training 1: the training activations (3000 B) does not fit",
                         "16000 B of the budget 18000 B"});
  s.budget = 10'000;  // not even the state
  testing::expect_error([&] { run_rl_memory(s, RlPlacement::kTimeSliced); },
                        {"start: the training state (16000 B) does not fit"});
}

TEST(ColocatedRl, BadSetupsAreRefused) {
  RlMemorySetup s = hand_made();
  s.block_size = 0;
  testing::expect_error([&] { s.validate(); }, {"block_size must be >= 1", "got 0"});
  s = hand_made();
  s.kv_blocks = -2;
  testing::expect_error([&] { run_rl_memory(s, RlPlacement::kColocated); },
                        {"kv_blocks must be >= 1", "got -2"});
  s = hand_made();
  s.budget = 0;
  testing::expect_error([&] { s.validate(); }, {"budget must be > 0"});
  s = hand_made();
  s.kv_bytes_per_token = 1ull << 40;
  s.kv_blocks = 1ll << 30;
  testing::expect_error([&] { s.validate(); }, {"overflows 64 bits"});
  testing::expect_error([&] { run_rl_memory(hand_made(), RlPlacement::kColocated, 0); },
                        {"cycles must be >= 1", "got 0"});
}

}  // namespace
}  // namespace book::mem
