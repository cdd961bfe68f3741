// Graded tests of serve.preempt: the newest running request loses all its blocks and goes to the
// front of the waiting queue with its tokens intact.
#include <gtest/gtest.h>

#include <vector>

#include "chapters/11_continuous_batching/preempt.h"
#include "common/testing/exercise.h"
#include "common/testing/expect_error.h"

namespace book::serve {
namespace {

using book::testing::expect_error;

// Three running requests of 20, 35 and 9 tokens in blocks of 8, two waiting.
struct Fixture {
  kv::BlockManager blocks{32, 8, /*prefix_caching=*/false};
  SchedulerState state;
  Fixture() {
    const int lengths[] = {20, 35, 9, 4, 6};
    for (int id = 0; id < 5; ++id) {
      Sequence s;
      s.id = id;
      for (int t = 0; t < lengths[id]; ++t) s.tokens.push_back(100 * id + t);
      s.prompt_tokens = lengths[id];
      state.sequences[id] = s;
      if (id < 3) {
        EXPECT_TRUE(blocks.add_sequence(id, s.tokens).ok);
        state.running.push_back(id);
      } else {
        state.waiting.push_back(id);
      }
    }
  }
};

EXERCISE_TEST("serve.preempt", Preempt, TheNewestLosesItsBlocksAndWaitsFirst) {
  Fixture f;
  const int used = f.blocks.num_used_blocks();  // 3 + 5 + 2 blocks of 8
  ASSERT_EQ(used, 10);
  const std::vector<int> tokens = f.state.sequences.at(2).tokens;
  EXPECT_EQ(preempt(f.state, f.blocks), 2) << "request 2 was admitted last";
  EXPECT_EQ(f.blocks.num_used_blocks(), 8) << "its 2 blocks (9 tokens in blocks of 8) are free";
  EXPECT_FALSE(f.blocks.contains(2));
  EXPECT_EQ(f.state.running, (std::vector<RequestId>{0, 1}));
  EXPECT_EQ(std::vector<RequestId>(f.state.waiting.begin(), f.state.waiting.end()),
            (std::vector<RequestId>{2, 3, 4}))
      << "it arrived before the waiting ones: it goes first";
  EXPECT_EQ(f.state.sequences.at(2).preemptions, 1);
  EXPECT_EQ(f.state.sequences.at(2).tokens, tokens) << "recompute keeps the tokens";
  f.blocks.check_invariants();
  EXPECT_EQ(preempt(f.state, f.blocks), 1);
  EXPECT_EQ(f.blocks.num_used_blocks(), 3);
  EXPECT_EQ(f.state.waiting.front(), 1);
  EXPECT_EQ(f.state.sequences.at(1).preemptions, 1);
  EXPECT_EQ(f.state.sequences.at(2).preemptions, 1) << "only the victim's count moves";
}

EXERCISE_TEST("serve.preempt", Preempt, EmptyRunningQueueIsAnError) {
  Fixture f;
  for (int i = 0; i < 3; ++i) preempt(f.state, f.blocks);
  EXPECT_EQ(f.blocks.num_used_blocks(), 0);
  EXPECT_EQ(f.state.waiting.size(), 5u);
  expect_error([&] { preempt(f.state, f.blocks); }, {"preempt", "nothing is running"});
  EXPECT_EQ(f.state.waiting.size(), 5u) << "the error changed nothing";
}

}  // namespace
}  // namespace book::serve
