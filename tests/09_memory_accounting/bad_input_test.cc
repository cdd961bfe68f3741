// Issue 19: inputs the chapter accepted and then hung on, divided by zero on, read past the end
// of a vector on, or answered with a wrapped 64-bit number for, are refused with a book::Error
// naming the function or flag and the value. Scaffolding: every check here is chapter-side (or
// called first by both tracks' exercise bodies), so this passes against the reference and
// against the unfinished exercises alike.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

#include "chapters/04_training_baseline/model.h"
#include "chapters/04_training_baseline/parameters.h"
#include "chapters/09_memory_accounting/activation_memory.h"
#include "chapters/09_memory_accounting/adam_8bit.h"
#include "chapters/09_memory_accounting/book_model.h"
#include "chapters/09_memory_accounting/caching_allocator.h"
#include "chapters/09_memory_accounting/calculator.h"
#include "chapters/09_memory_accounting/colocated_rl.h"
#include "chapters/09_memory_accounting/dp_states.h"
#include "chapters/09_memory_accounting/recompute.h"
#include "chapters/09_memory_accounting/trainer_remedies.h"
#include "common/testing/expect_error.h"

namespace book::mem {
namespace {

using book::testing::expect_error;
constexpr std::uint64_t kMax64 = std::numeric_limits<std::uint64_t>::max();

TEST(BadInput, AllocationsNear2To64AreRefusedNotLoopedOn) {
  // Rounded up to 2 MiB, 2^64 − 2^20 wrapped to 0: every new segment had size 0 and malloc
  // looped forever; SIZE_MAX rounded to 0 and returned a 2 MiB block for it.
  for (bool expandable : {false, true}) {
    CachingAllocator a({.expandable_segments = expandable});
    expect_error([&] { a.malloc(std::numeric_limits<std::size_t>::max() - (1 << 20) + 1); },
                 {"CachingAllocator::malloc: 18446744073708503040 bytes", "2^40 (1 TiB)"});
    expect_error([&] { a.malloc(std::numeric_limits<std::size_t>::max()); }, "ask for less");
    EXPECT_EQ(a.bytes().reserved, 0u);
  }
  // 1 TiB is the limit; one expandable segment cannot grow past it either (its offsets would
  // spill into the address's segment bits).
  CachingAllocator a({.expandable_segments = true});
  a.malloc(kMaxSegmentBytes);
  expect_error([&] { a.malloc(kSmallSize + 1); },
               "the expandable segment would grow to 1099513724928 bytes");
}

TEST(BadInput, EightBitBlocksOfZeroAreRefusedBeforeTheDivision) {
  // (size + block − 1) / block divided by zero (SIGFPE), in the initialiser lists.
  expect_error([] { Adam8bitState(100, 0); }, "Adam8bitState: block must be >= 1, got 0");
  train::Config c;
  c.vocab_size = 12;
  c.context = 8;
  c.n_layer = 1;
  c.n_head = 2;
  c.d_model = 8;
  const train::ParameterLayout layout(c);
  expect_error([&] { Adam8bitOptimizer(layout, 0, nullptr); },
               "Adam8bitOptimizer: block must be >= 1, got 0");
  BudgetedArena host("host", 1 << 30);
  expect_error([&] { OffloadOptimizer(layout, host, true, true, -3); },
               "OffloadOptimizer: block must be >= 1, got -3");
}

TEST(BadInput, AnEightBitStateWithTooFewScalesIsRefused) {
  // 10 elements in blocks of 4 have 3 scales; with block = 2 the step read m_scale[3] and [4].
  Adam8bitState s(10, 4);
  s.block = 2;
  std::vector<float> params(10, 0.1f), grads(10, 0.2f);
  expect_error([&] { adam8bit_step(params, grads, s, 1e-3f, {}); },
               {"adam8bit_step: a state of 10 elements in blocks of 2", "5 scales per moment",
                "3/3 scales"});
  Adam8bitState t(10, 4);
  t.v_scale.pop_back();
  expect_error([&] { adam8bit_step(params, grads, t, 1e-3f, {}); }, "3/2 scales");
}

TEST(BadInput, ASegmentPastTheModelsLastBlockIsRefused) {
  train::Config c;
  c.vocab_size = 12;
  c.context = 8;
  c.n_layer = 4;
  c.n_head = 2;
  c.d_model = 16;
  train::Model<float> model(c, 2);
  RecomputeBuffers buffers(c, 2, 2);
  const train::ModelTensors<float> p = train::bind(model.layout(), model.params().data());
  std::vector<float> x(std::size_t{2} * c.context * c.d_model, 0.5f), dy = x, dx = x;
  // Blocks [3, 5) of 4 is a segment of 2, which the buffers hold: blocks[4] was read past the end.
  expect_error(
      [&] {
        recompute_segment_backward(c, p, p, 3, 5, 2, c.context, x.data(), dy.data(), dx.data(),
                                   buffers);
      },
      "recompute_segment_backward: blocks [3, 5) of a model of 4 blocks");
  expect_error(
      [&] {
        recompute_segment_backward(c, p, p, -1, 1, 2, c.context, x.data(), dy.data(), dx.data(),
                                   buffers);
      },
      "blocks [-1, 1)");
}

TEST(BadInput, ActivationBytesThatWouldWrapAreRefused) {
  // s·b·h = 2^24 · 2^20 · 2^20 = 2^64 wrapped to 0 bytes.
  LayerActivationInputs in{.seq = 1 << 24, .micro_batch = 1 << 20, .hidden = 1 << 20, .heads = 1};
  expect_error([&] { activation_bytes_per_layer(in); },
               {"activation_bytes_per_layer: s=16777216 b=1048576 h=1048576 a=1", "above 2^60"});
}

TEST(BadInput, ParameterCountsWhoseBytesWrapAreRefused) {
  // 16 bytes × 2^61 parameters = 2^65: the optimizer states (8 × 2^61 = 2^64) read 0.
  expect_error([] { dp_model_states(std::uint64_t{1} << 61, 1, zero::Stage::kDdp, DType::kBF16); },
               {"dp_model_states: 2305843009213693952 parameters", "above 2^59"});
  // psi + dp − 1 wrapped for psi near 2^64.
  expect_error([] { dp_model_states(kMax64, 8, zero::Stage::kZero3, DType::kBF16); }, "2^59");
  // 2^59 itself is priced: 16 · 2^59 = 2^63 bytes in DDP.
  EXPECT_EQ(dp_model_states(std::uint64_t{1} << 59, 1, zero::Stage::kDdp, DType::kBF16).total(),
            std::uint64_t{1} << 63);
}

TEST(BadInput, SetupBuffersThatWouldWrapTheTotalAreRefused) {
  mem::Setup s;
  s.shape = preset("llama2-7b");
  s.bucket_bytes = kMax64;
  expect_error([&] { validate(s); }, "Setup: bucket_bytes must be at most 2^40 (1 TiB), got ");
  s.bucket_bytes = 25u << 20;
  s.overhead_bytes = kMax64 - 5;
  expect_error([&] { validate(s); }, "Setup: overhead_bytes must be at most 2^58, got ");
}

TEST(BadInput, PredictionsRefuseWhatTheTrainerRefuses) {
  // A micro-batch of −1 priced exabytes of activations; 0 priced none.
  for (int micro_batch : {-1, 0}) {
    train::TrainOptions o;
    o.micro_batch = micro_batch;
    expect_error([&] { predict_trainer_memory(o); },
                 "predict_trainer_memory: micro_batch and accumulation must be >= 1, got " +
                     std::to_string(micro_batch));
    expect_error([&] { predict_remedies(o, {}); }, "predict_remedies: micro_batch");
  }
  train::TrainOptions o;
  o.max_lr = std::numeric_limits<float>::infinity();
  expect_error([&] { predict_trainer_memory(o); }, "inf");
}

TEST(BadInput, KvBlockCountsAndMovedBytesThatWrapAreRefused) {
  // 2^64 − 1 one-byte blocks: the uint64 count was cast to int64 and came back −1.
  RlMemorySetup s{.budget = kMax64, .kv_bytes_per_token = 1, .block_size = 1};
  expect_error([&] { max_kv_blocks(s, RlPlacement::kTimeSliced); },
               {"max_kv_blocks: the budget 18446744073709551615 B holds", "above 2^63 - 1"});
  // 2 × training_state wrapped when the state is above 2^63 bytes.
  RlMemorySetup big{.budget = kMax64,
                    .training_state = (std::uint64_t{1} << 63) + 1,
                    .kv_bytes_per_token = 1,
                    .block_size = 1,
                    .kv_blocks = 1};
  expect_error([&] { run_rl_memory(big, RlPlacement::kTimeSliced); },
               "RlMemorySetup: training_state 9223372036854775809 B is above 2^63 B");
}

TEST(BadInput, TheSmallestBudgetForOneKvBlockIsExact) {
  // Colocated: 100 + 20 + 30 beside the pool, one block of 4 tokens × 2 B: 158 B.
  // Time-sliced: the larger of the rollout (30 + 8 = 38) and the training (100 + 20 = 120).
  RlMemorySetup s{.budget = 1,
                  .training_state = 100,
                  .training_activations = 20,
                  .inference_weights = 30,
                  .kv_bytes_per_token = 2,
                  .block_size = 4};
  EXPECT_EQ(smallest_budget(s, RlPlacement::kColocated), 158u);
  EXPECT_EQ(smallest_budget(s, RlPlacement::kTimeSliced), 120u);
  for (RlPlacement p : {RlPlacement::kColocated, RlPlacement::kTimeSliced}) {
    s.budget = smallest_budget(s, p);
    EXPECT_GE(max_kv_blocks(s, p), 1) << rl_placement_name(p);
    --s.budget;
    EXPECT_EQ(max_kv_blocks(s, p), 0) << rl_placement_name(p) << " at " << s.budget << " B";
  }
}

}  // namespace
}  // namespace book::mem
