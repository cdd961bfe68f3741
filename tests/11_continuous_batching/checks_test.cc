// Scaffolding tests (on the reference bodies) of the checks before anything is scheduled: the
// scheduler refuses up front a request that could never run, and the engine refuses bad requests
// and mismatched parts, each with a message naming the numbers.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "chapters/10_paged_attention/served_model.h"
#include "chapters/11_continuous_batching/engine.h"
#include "chapters/11_continuous_batching/host_arena.h"
#include "chapters/11_continuous_batching/scheduler.h"
#include "common/testing/expect_error.h"
#include "tests/11_continuous_batching/test_engine.h"

namespace book::serve {
namespace {

using book::testing::expect_error;

using book::serve::testing::Server;

TEST(Scheduler, RequestsThatCouldNeverRunAreRefusedUpFront) {
  kv::BlockManager blocks(4, 4, false);  // 16 slots
  Scheduler scheduler(blocks, {2, 8, true}, 64);
  expect_error([&] { scheduler.add(std::vector<int>(10, 1), 8); },
               {"needs 5 KV blocks", "whole cache of 4 blocks", "could never run"});
  expect_error([&] { scheduler.add(std::vector<int>(60, 1), 6); },
               {"65 positions", "context of 64"});
  expect_error([&] { scheduler.add({}, 3); }, "prompt is empty");
  expect_error([&] { scheduler.add({1}, 0); }, {"max_tokens", "0"});
  kv::BlockManager roomy(64, 4, false);
  Scheduler unchunked(roomy, {2, 8, false}, 64);
  expect_error([&] { unchunked.add(std::vector<int>(6, 1), 4); },
               {"without chunked prefill", "9 positions", "token budget of 8"});
  EXPECT_EQ(scheduler.add(std::vector<int>(9, 1), 8), 0) << "16 positions fit 4 blocks of 4";
  EXPECT_FALSE(scheduler.state().waiting.empty());
}

TEST(Scheduler, AppendTokensTakesOnlyARunningRequestWithinItsMaxTokens) {
  // Chapter 13's seam: a speculative step gives a request the proposals it accepted.
  kv::BlockManager blocks(16, 4, false);
  Scheduler scheduler(blocks, {2, 8, true}, 64);
  const RequestId id = scheduler.add({1, 2, 3}, 4);
  const std::vector<int> two{5, 6};
  expect_error([&] { scheduler.append_tokens(id, two); }, {"request 0", "not running"});
  const StepPlan plan = scheduler.schedule();  // admits and prefills it whole
  const std::vector<int> first{4};
  scheduler.record(plan, first);
  scheduler.append_tokens(id, two);
  EXPECT_EQ(scheduler.sequence(id).tokens, (std::vector<int>{1, 2, 3, 4, 5, 6}));
  expect_error([&] { scheduler.append_tokens(id, two); }, {"3 of max_tokens 4", "2 more"});
}

TEST(Scheduler, APreemptionModeOutsideItsValuesIsRefused) {
  kv::BlockManager blocks(16, 4, false);
  SchedulerConfig config{2, 8, true};
  config.preemption = static_cast<PreemptionMode>(7);  // issue 36: it was accepted
  expect_error([&] { Scheduler scheduler(blocks, config, 64); },
               "serve::PreemptionMode(7) is not a value of serve::PreemptionMode (0 to 1)");
}

TEST(Scheduler, RecordAppliesAPlanOnceAndChecksBeforeChanging) {
  // Issue 36: a second record of one plan added a token without a model step.
  kv::BlockManager blocks(16, 4, false);
  Scheduler scheduler(blocks, {2, 8, true}, 64);
  const RequestId id = scheduler.add({1, 2, 3}, 4);
  const std::vector<int> none, one{4}, two{4, 5};
  expect_error([&] { scheduler.record(StepPlan{}, none); }, "no plan awaits its results");
  const StepPlan plan = scheduler.schedule();
  expect_error([&] { scheduler.record(plan, two); }, "2 sampled tokens for 1 sampling chunks");
  EXPECT_EQ(scheduler.sequence(id).tokens.size(), 3u) << "a refused record changes nothing";
  scheduler.record(plan, one);
  expect_error([&] { scheduler.record(plan, one); }, "record was called twice for one plan");
  EXPECT_EQ(scheduler.sequence(id).tokens, (std::vector<int>{1, 2, 3, 4}));
}

TEST(Engine, BadRequestsAndMismatchedPartsAreErrors) {
  Server server(8, 4, {2, 8, true});
  GenerationRequest r;
  r.prompt = {1, 2, 3};
  r.prompt[1] = 50;
  expect_error([&] { server.engine.submit(r); }, {"prompt token 50", "vocabulary [0, 50)"});
  r.prompt = {1, 2, 3};
  r.stop_tokens = {-1};
  expect_error([&] { server.engine.submit(r); }, {"stop token -1"});
  r.stop_tokens = {};
  r.max_tokens = 40;  // 42 positions > 8 blocks of 4
  expect_error([&] { server.engine.submit(r); }, {"needs 11 KV blocks", "could never run"});
  r.max_tokens = 4;
  r.sampling.top_p = 0;
  expect_error([&] { server.engine.submit(r); }, {"top_p", "(0, 1]"});
  kv::BlockManager other(9, 4, false);
  expect_error(
      [&] {
        Engine(server.runner, other, {2, 8, true});
      },
      {"9 blocks of 4", "cache 8 of 4"});
  kv::BlockManager same(8, 4, false);
  expect_error(
      [&] {
        Engine(server.runner, same, {2, 16, true});
      },
      {"8 rows per step", "budget of 16"});
  EXPECT_FALSE(server.engine.has_work()) << "refused requests never entered the queue";
}

// Review of issue 19: only host blocks were range-checked, so a device block of 2^20 read far
// outside the cache, and a cache of another shape was read with the arena's strides.
TEST(HostKvArena, RefusesDeviceBlocksOutsideTheCacheAndACacheOfAnotherShape) {
  const kv::KvShape shape{2, 2, 4};
  kv::PagedKvCache cache(shape, 4, 4);
  HostKvArena arena(shape, 2, 4);
  const SwapCopy far{.id = 7, .device_blocks = {1 << 20}, .host_blocks = {0}, .positions = 1};
  expect_error([&] { arena.swap_out(cache, far); },
               "HostKvArena::swap_out: device block 1048576 is outside the cache of 4 blocks");
  expect_error([&] { arena.swap_in(cache, far); },
               "HostKvArena::swap_in: device block 1048576 is outside the cache of 4 blocks");
  expect_error([&] { arena.swap_out(cache, {.device_blocks = {-1}, .host_blocks = {0}}); },
               "device block -1 is outside");
  kv::PagedKvCache wider({2, 3, 4}, 4, 4);
  const SwapCopy fine{.id = 7, .device_blocks = {3}, .host_blocks = {1}, .positions = 4};
  expect_error([&] { arena.swap_out(wider, fine); },
               "HostKvArena::swap_out: the cache's shape (2 layers, 3 heads of 4) is not the "
               "arena's (2 layers, 2 heads of 4)");
  expect_error([&] { arena.swap_in(wider, fine); }, "HostKvArena::swap_in: the cache's shape");
  // In range and of one shape: 4 positions · 2 (K and V) · 2 layers · 2 heads · 4 · 4 bytes.
  EXPECT_EQ(arena.swap_out(cache, fine), 4 * 2 * 2 * 2 * 4 * 4);
}

}  // namespace
}  // namespace book::serve
