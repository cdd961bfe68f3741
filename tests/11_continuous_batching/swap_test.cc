// Graded tests of preemption by swap through serve.schedule_step: one scripted run whose every
// swap is known in advance (which request, which device and host blocks, how many positions),
// a full host arena falling back to recompute, and cancel() returning host and device blocks.
#include <gtest/gtest.h>

#include <vector>

#include "chapters/11_continuous_batching/scheduler.h"
#include "common/testing/exercise.h"
#include "common/testing/expect_error.h"

namespace book::serve {
namespace {

// Runs one step, "samples" token 500 + step for every sampling chunk, finishes what is done.
StepPlan step(Scheduler& s, int number) {
  const StepPlan plan = s.schedule();
  std::vector<int> sampled;
  for (const ScheduledChunk& c : plan.chunks)
    if (c.samples) sampled.push_back(500 + number);
  s.record(plan, sampled);
  for (const ScheduledChunk& c : plan.chunks)
    if (c.samples && s.sequence(c.id).generated() == s.sequence(c.id).max_tokens) s.finish(c.id);
  return plan;
}

SchedulerConfig swap_config(int host_blocks) {
  SchedulerConfig c{2, 16, true};
  c.preemption = PreemptionMode::kSwap;
  c.host_blocks = host_blocks;
  return c;
}

EXERCISE_TEST("serve.schedule_step", Swap, EverySwapCountedExactly) {
  // 4 device blocks of 4; A (7-token prompt) and B (6) each need 4 blocks to finish 10 tokens.
  kv::BlockManager blocks(4, 4, /*prefix_caching=*/false);
  Scheduler s(blocks, swap_config(8), 64);
  const RequestId a = s.add(std::vector<int>(7, 1), 10), b = s.add(std::vector<int>(6, 2), 10);
  step(s, 1);  // both admitted: A holds positions 0..6 (2 blocks), B 0..5 (2 blocks)
  step(s, 2);  // both decode: A writes position 7, B position 6 (no new block)
  const std::vector<kv::BlockId> b_table(blocks.block_table(b).begin(),
                                         blocks.block_table(b).end());
  const StepPlan third = step(s, 3);  // A's position 8 needs a fifth block: B, the newest, goes
  ASSERT_EQ(third.preempted, (std::vector<RequestId>{b}));
  ASSERT_EQ(third.swapped_out.size(), 1u);
  const SwapCopy& out = third.swapped_out[0];
  EXPECT_EQ(out.id, b);
  EXPECT_EQ(out.positions, 7) << "B's prompt and its first sampled token were in the cache";
  EXPECT_EQ(out.first, 0);
  EXPECT_EQ(out.device_blocks, b_table) << "read from B's blocks as they were";
  EXPECT_EQ(out.host_blocks, (std::vector<int>{0, 1})) << "2 host blocks for 7 positions";
  EXPECT_EQ(s.swapped(), (std::vector<RequestId>{b}));
  EXPECT_TRUE(s.state().waiting.empty()) << "a swapped request waits in neither queue";
  EXPECT_EQ(s.host_blocks_used(), 2);
  EXPECT_EQ(s.preemption_stats().positions_out, 7);
  EXPECT_EQ(s.preemption_stats().recomputed, 0);
  // A decodes alone until it finishes (its 10th token at step 11); B needs 2 blocks and A's 3
  // (then 4) leave at most 1: B stays out.
  int number = 4;
  for (; s.sequence(a).generated() < 9; ++number) {
    const StepPlan p = step(s, number);
    EXPECT_TRUE(p.swapped_in.empty()) << "step " << number;
  }
  step(s, number++);  // A's last token: A finishes and frees its blocks
  EXPECT_EQ(blocks.num_used_blocks(), 0);
  const StepPlan back = step(s, number++);
  ASSERT_EQ(back.swapped_in.size(), 1u);
  const SwapCopy& in = back.swapped_in[0];
  EXPECT_EQ(in.id, b);
  EXPECT_EQ(in.positions, 7);
  EXPECT_EQ(in.first, 0);
  EXPECT_EQ(in.host_blocks, (std::vector<int>{0, 1}));
  EXPECT_EQ(in.device_blocks.size(), 2u);
  ASSERT_EQ(back.chunks.size(), 1u);
  EXPECT_EQ(back.chunks[0].start, 7) << "resumed where it stopped: no recompute";
  EXPECT_EQ(back.chunks[0].count, 1);
  EXPECT_TRUE(back.chunks[0].samples);
  EXPECT_EQ(s.host_blocks_used(), 0);
  const PreemptionStats& st = s.preemption_stats();
  EXPECT_EQ(st.swapped_out, 1);
  EXPECT_EQ(st.swapped_in, 1);
  EXPECT_EQ(st.positions_in, 7);
  EXPECT_EQ(st.dropped_positions, 0);
}

EXERCISE_TEST("serve.schedule_step", Swap, AFullHostArenaRecomputesTheVictim) {
  kv::BlockManager blocks(4, 4, /*prefix_caching=*/false);
  Scheduler s(blocks, swap_config(1), 64);  // one host block: B's 7 positions need 2
  s.add(std::vector<int>(7, 1), 10);
  const RequestId b = s.add(std::vector<int>(6, 2), 10);
  for (int n = 1; n <= 2; ++n) step(s, n);
  const StepPlan third = step(s, 3);
  EXPECT_EQ(third.preempted, (std::vector<RequestId>{b}));
  EXPECT_TRUE(third.swapped_out.empty()) << "no room in the arena";
  EXPECT_EQ(s.state().waiting.front(), b) << "recompute: it waits first";
  const PreemptionStats& st = s.preemption_stats();
  EXPECT_EQ(st.swap_fallbacks, 1);
  EXPECT_EQ(st.recomputed, 1);
  EXPECT_EQ(st.dropped_positions, 7) << "its 7 computed positions will be run again";
  EXPECT_EQ(s.host_blocks_used(), 0);
}

EXERCISE_TEST("serve.schedule_step", Swap, CancelReturnsDeviceAndHostBlocks) {
  kv::BlockManager blocks(4, 4, /*prefix_caching=*/false);
  Scheduler s(blocks, swap_config(8), 64);
  const RequestId a = s.add(std::vector<int>(7, 1), 10), b = s.add(std::vector<int>(6, 2), 10);
  const RequestId c = s.add(std::vector<int>(3, 3), 2);  // waits: max_running is 2
  for (int n = 1; n <= 3; ++n) step(s, n);
  ASSERT_EQ(s.swapped(), (std::vector<RequestId>{b}));
  EXPECT_TRUE(s.cancel(b)) << "swapped out";
  EXPECT_EQ(s.host_blocks_used(), 0);
  EXPECT_TRUE(s.swapped().empty());
  EXPECT_FALSE(s.cancel(b)) << "cancelled twice";
  EXPECT_TRUE(s.cancel(c)) << "waiting";
  EXPECT_TRUE(s.state().waiting.empty());
  EXPECT_EQ(blocks.num_used_blocks(), 3) << "A's 9 positions";
  EXPECT_TRUE(s.cancel(a)) << "running";
  EXPECT_EQ(blocks.num_used_blocks(), 0);
  EXPECT_FALSE(s.has_work());
  EXPECT_FALSE(s.cancel(99)) << "never added";
  book::testing::expect_error([&] { Scheduler(blocks, swap_config(0), 64); },
                              {"host_blocks is 0", "preempt by recompute"});
}

}  // namespace
}  // namespace book::serve
