// Graded tests of serve.schedule_step on hand-built states: decode first, then prefill; the token
// budget; chunked and unchunked prompts; max_running; preemption, of another request and of the
// request itself. The whole scheduler under a fuzzer is scheduler_fuzz_test.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "chapters/11_continuous_batching/schedule_step.h"
#include "common/testing/exercise.h"
#include "common/testing/expect_error.h"

namespace book::serve {
namespace {

using book::testing::expect_error;

std::vector<int> tokens_of(int id, int n) {
  std::vector<int> t(n);
  for (int i = 0; i < n; ++i) t[i] = 1000 * id + i;
  return t;
}

// A state built by hand: `decoding` requests with all but their last token in the cache,
// `prefilling` ones with `done` of their prompt in the cache, then waiting ones.
struct Builder {
  kv::BlockManager blocks;
  SchedulerState state;
  explicit Builder(int num_blocks, int block_size) : blocks(num_blocks, block_size, false) {}
  void decoding(int id, int length) {  // length tokens in the cache, one more sampled
    add(id, length + 1, length);
    EXPECT_TRUE(blocks.add_sequence(id, std::span(state.sequences[id].tokens).first(length)).ok);
    blocks.mark_computed(id, length);
    state.running.push_back(id);
  }
  void prefilling(int id, int length, int done) {
    add(id, length, length);
    EXPECT_TRUE(blocks.add_sequence(id, state.sequences[id].tokens).ok);
    blocks.mark_computed(id, done);
    state.running.push_back(id);
  }
  void waiting(int id, int length) {
    add(id, length, length);
    state.waiting.push_back(id);
  }
  void add(int id, int length, int prompt) {
    Sequence s;
    s.id = id;
    s.tokens = tokens_of(id, length);
    s.prompt_tokens = prompt;
    s.max_tokens = 100;
    state.sequences[id] = s;
  }
};

SchedulerConfig config(int max_running, int budget, bool chunked = true) {
  return {max_running, budget, chunked};
}

void expect_chunk(const ScheduledChunk& c, RequestId id, int start, int count, bool samples,
                  bool decode) {
  EXPECT_EQ(c.id, id);
  EXPECT_EQ(c.start, start) << "request " << id;
  EXPECT_EQ(c.count, count) << "request " << id;
  EXPECT_EQ(c.samples, samples) << "request " << id;
  EXPECT_EQ(c.decode, decode) << "request " << id;
}

EXERCISE_TEST("serve.schedule_step", ScheduleStep, DecodesFirstThenPrefillWithinTheBudget) {
  Builder b(64, 4);
  b.prefilling(0, 30, 10);  // older, but prefilling: after the decodes
  b.decoding(1, 13);
  b.decoding(2, 8);  // 8 tokens: its next token starts a new block
  b.waiting(3, 5);
  const int free_before = b.blocks.num_free_blocks();
  const StepPlan plan = schedule_step(b.state, b.blocks, config(4, 16));
  ASSERT_EQ(plan.chunks.size(), 3u);
  expect_chunk(plan.chunks[0], 1, 13, 1, true, true);
  expect_chunk(plan.chunks[1], 2, 8, 1, true, true);
  expect_chunk(plan.chunks[2], 0, 10, 14, false, false);  // 16 − 2 decodes
  EXPECT_EQ(plan.tokens(), 16);
  EXPECT_TRUE(plan.admitted.empty()) << "no budget left for request 3";
  EXPECT_EQ(b.blocks.length(1), 14) << "the decode appended its sampled token";
  EXPECT_EQ(b.blocks.num_free_blocks(), free_before - 1) << "only request 2 needed a new block";
  EXPECT_EQ(b.state.waiting.front(), 3);
  b.blocks.check_invariants();
}

EXERCISE_TEST("serve.schedule_step", ScheduleStep, AdmitsInOrderAndChunksTheLastPrompt) {
  Builder b(64, 4);
  b.decoding(0, 6);
  b.waiting(1, 8);
  b.waiting(2, 30);
  b.waiting(3, 2);
  const StepPlan plan = schedule_step(b.state, b.blocks, config(4, 21));
  ASSERT_EQ(plan.chunks.size(), 3u);
  expect_chunk(plan.chunks[0], 0, 6, 1, true, true);
  expect_chunk(plan.chunks[1], 1, 0, 8, true, false);    // whole prompt: samples
  expect_chunk(plan.chunks[2], 2, 0, 12, false, false);  // 21 − 1 − 8 rows of its 30
  EXPECT_EQ(plan.admitted, (std::vector<RequestId>{1, 2}));
  EXPECT_EQ(b.state.running, (std::vector<RequestId>{0, 1, 2}));
  EXPECT_EQ(std::vector<RequestId>(b.state.waiting.begin(), b.state.waiting.end()),
            (std::vector<RequestId>{3}));
  // The next step continues request 2 where it stopped, before admitting request 3.
  b.blocks.mark_computed(1, 8);
  b.blocks.mark_computed(2, 12);
  b.state.sequences[1].tokens.push_back(7);
  b.state.sequences[0].tokens.push_back(9);
  const StepPlan next = schedule_step(b.state, b.blocks, config(4, 21));
  ASSERT_EQ(next.chunks.size(), 4u);
  expect_chunk(next.chunks[2], 2, 12, 18, true, false);
  expect_chunk(next.chunks[3], 3, 0, 1, false, false);
}

EXERCISE_TEST("serve.schedule_step", ScheduleStep, WithoutChunkingALongPromptWaitsWhole) {
  Builder b(64, 4);
  b.decoding(0, 6);
  b.waiting(1, 30);
  b.waiting(2, 3);
  const int free_before = b.blocks.num_free_blocks();
  const StepPlan plan = schedule_step(b.state, b.blocks, config(4, 21, /*chunked=*/false));
  ASSERT_EQ(plan.chunks.size(), 1u) << "30 tokens do not fit the 20 rows left; 2 waits behind 1";
  EXPECT_TRUE(plan.admitted.empty());
  EXPECT_FALSE(b.blocks.contains(1)) << "admitted and freed again";
  EXPECT_EQ(b.blocks.num_free_blocks(), free_before - 0) << "request 0's block had room";
  EXPECT_EQ(b.state.waiting.size(), 2u);
  const StepPlan roomy = schedule_step(b.state, b.blocks, config(4, 40, false));
  ASSERT_EQ(roomy.chunks.size(), 3u);
  expect_chunk(roomy.chunks[1], 1, 0, 30, true, false);
  expect_chunk(roomy.chunks[2], 2, 0, 3, true, false);
}

EXERCISE_TEST("serve.schedule_step", ScheduleStep, MaxRunningCapsAdmissions) {
  Builder b(64, 4);
  b.decoding(0, 5);
  for (int id = 1; id <= 4; ++id) b.waiting(id, 2);
  const StepPlan plan = schedule_step(b.state, b.blocks, config(3, 64));
  EXPECT_EQ(plan.admitted, (std::vector<RequestId>{1, 2}));
  EXPECT_EQ(b.state.running.size(), 3u);
}

EXERCISE_TEST("serve.schedule_step", ScheduleStep, OutOfBlocksPreemptsTheNewestAndAdmitsNothing) {
  Builder b(4, 4);   // 16 slots
  b.decoding(0, 8);  // 2 full blocks: its next token needs a third
  b.decoding(1, 8);  // 2 full blocks
  b.waiting(2, 1);
  ASSERT_EQ(b.blocks.num_free_blocks(), 0);
  const StepPlan plan = schedule_step(b.state, b.blocks, config(4, 16));
  ASSERT_EQ(plan.chunks.size(), 1u);
  expect_chunk(plan.chunks[0], 0, 8, 1, true, true);
  EXPECT_EQ(plan.preempted, (std::vector<RequestId>{1}));
  EXPECT_TRUE(plan.admitted.empty()) << "no admission in a step that preempted";
  EXPECT_EQ(std::vector<RequestId>(b.state.waiting.begin(), b.state.waiting.end()),
            (std::vector<RequestId>{1, 2}));
  EXPECT_EQ(b.state.sequences[1].preemptions, 1);
  EXPECT_EQ(b.blocks.num_used_blocks(), 3);
  b.blocks.check_invariants();
}

EXERCISE_TEST("serve.schedule_step", ScheduleStep, TheNewestPreemptsItselfWhenItCannotGrow) {
  Builder b(4, 4);
  b.decoding(0, 6);  // room in its second block
  b.decoding(1, 8);  // needs a block, none free, and it is the newest
  const StepPlan plan = schedule_step(b.state, b.blocks, config(4, 16));
  ASSERT_EQ(plan.chunks.size(), 1u);
  expect_chunk(plan.chunks[0], 0, 6, 1, true, true);
  EXPECT_EQ(plan.preempted, (std::vector<RequestId>{1}));
  EXPECT_EQ(b.state.running, (std::vector<RequestId>{0}));
}

EXERCISE_TEST("serve.schedule_step", ScheduleStep, AnInvalidConfigIsAnError) {
  Builder b(4, 4);
  expect_error([&] { schedule_step(b.state, b.blocks, config(0, 16)); }, {"max_running", "0"});
  expect_error([&] { schedule_step(b.state, b.blocks, config(8, 4)); },
               {"token_budget (4)", "max_running (8)"});
}

}  // namespace
}  // namespace book::serve
