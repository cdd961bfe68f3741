// Graded: mem.activation_bytes. Korthikanti et al. 2022's per-layer activation bytes for GPT-3
// 175B (s = 2048, h = 12288, a = 96) at t = 1 and t = 8, with and without sequence parallelism,
// selective and full recomputation, against the paper's sbh·(coefficient) forms; the paper's "5x"
// claim; seeded random shapes against a long-double reference; bad input refused.
#include "chapters/09_memory_accounting/activation_memory.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

#include "common/rng.h"
#include "common/testing/exercise.h"
#include "common/testing/expect_error.h"

namespace book::mem {
namespace {

LayerActivationInputs gpt3(int t, bool sp, Recomputation r) {
  LayerActivationInputs in;
  in.seq = 2048, in.micro_batch = 1, in.hidden = 12288, in.heads = 96;
  in.tensor_parallel = t, in.sequence_parallel = sp, in.recompute = r;
  return in;
}

constexpr std::uint64_t kSbh = 2048ull * 1 * 12288;  // 25 165 824

EXERCISE_TEST("mem.activation_bytes", ActivationBytes, Gpt3MatchesThePapersTable) {
  // 5as/h = 5 · 96 · 2048 / 12288 = 80, so sbh(34 + 80) with no parallelism.
  EXPECT_EQ(activation_bytes_per_layer(gpt3(1, false, Recomputation::kNone)), 114 * kSbh);
  // t = 8: 10 + 24/8 + 80/8 = 23.
  EXPECT_EQ(activation_bytes_per_layer(gpt3(8, false, Recomputation::kNone)), 23 * kSbh);
  // + sequence parallelism: (34 + 80)/8.
  EXPECT_EQ(activation_bytes_per_layer(gpt3(8, true, Recomputation::kNone)), 114 * kSbh / 8);
  // Selective recomputation: 10 + 24/8 = 13; with SP 34/8.
  EXPECT_EQ(activation_bytes_per_layer(gpt3(8, false, Recomputation::kSelective)), 13 * kSbh);
  EXPECT_EQ(activation_bytes_per_layer(gpt3(8, true, Recomputation::kSelective)), 34 * kSbh / 8);
  // Full: the layer's input, 2sbh (16-bit), sharded by SP.
  EXPECT_EQ(activation_bytes_per_layer(gpt3(8, false, Recomputation::kFull)), 2 * kSbh);
  EXPECT_EQ(activation_bytes_per_layer(gpt3(8, true, Recomputation::kFull)), 2 * kSbh / 8);
  // t = 1: SP changes nothing.
  EXPECT_EQ(activation_bytes_per_layer(gpt3(1, true, Recomputation::kSelective)), 34 * kSbh);
}

EXERCISE_TEST("mem.activation_bytes", ActivationBytes,
              SequenceParallelPlusSelectiveIsFiveTimesLess) {
  // Korthikanti et al., abstract: the two together "reduce activation memory by 5x" against
  // tensor parallelism alone; for GPT-3 at t = 8 it is 23 / 4.25 = 5.41.
  const double tp_only = activation_bytes_per_layer(gpt3(8, false, Recomputation::kNone));
  const double both = activation_bytes_per_layer(gpt3(8, true, Recomputation::kSelective));
  EXPECT_GE(tp_only / both, 5.0) << "tp only " << tp_only << " B, SP + selective " << both << " B";
  EXPECT_NEAR(tp_only / both, 23.0 / 4.25, 1e-12);
}

EXERCISE_TEST("mem.activation_bytes", ActivationBytes, RandomShapesMatchTheFormula) {
  Rng rng(909);
  for (int trial = 0; trial < 200; ++trial) {
    const int ts[] = {1, 2, 4, 8};
    LayerActivationInputs in;
    in.tensor_parallel = ts[rng.uniform_int(0, 3)];
    in.heads = in.tensor_parallel * rng.uniform_int(1, 12);
    in.hidden = in.heads * rng.uniform_int(1, 100);
    in.seq = rng.uniform_int(1, 5000);
    in.micro_batch = rng.uniform_int(1, 7);
    in.sequence_parallel = rng.uniform_int(0, 1) == 1;
    in.recompute = static_cast<Recomputation>(rng.uniform_int(0, 2));
    const long double s = in.seq, b = in.micro_batch, h = in.hidden, a = in.heads,
                      t = in.tensor_parallel, sbh = s * b * h;
    long double expected = 0;
    if (in.recompute == Recomputation::kNone)
      expected = in.sequence_parallel ? sbh * (34 + 5 * a * s / h) / t
                                      : sbh * (10 + 24 / t + 5 * a * s / (h * t));
    else if (in.recompute == Recomputation::kSelective)
      expected = in.sequence_parallel ? sbh * 34 / t : sbh * (10 + 24 / t);
    else
      expected = in.sequence_parallel ? 2 * sbh / t : 2 * sbh;
    const std::uint64_t got = activation_bytes_per_layer(in);
    // One integer division: the exact value rounded down.
    EXPECT_NEAR(static_cast<long double>(got), std::floor(expected + 1e-6L), 1.0L)
        << "s=" << in.seq << " b=" << in.micro_batch << " h=" << in.hidden << " a=" << in.heads
        << " t=" << in.tensor_parallel << " sp=" << in.sequence_parallel
        << " recompute=" << static_cast<int>(in.recompute) << " expected " << (double)expected;
  }
}

EXERCISE_TEST("mem.activation_bytes", ActivationBytes, BadInputIsRefused) {
  LayerActivationInputs in = gpt3(1, false, Recomputation::kNone);
  in.seq = 0;
  testing::expect_error([&] { activation_bytes_per_layer(in); }, "s=0");
  in = gpt3(5, false, Recomputation::kNone);
  testing::expect_error([&] { activation_bytes_per_layer(in); }, {"t=5", "a=96"});
  in = gpt3(1, false, Recomputation::kNone);
  in.micro_batch = -2;
  testing::expect_error([&] { activation_bytes_per_layer(in); }, "b=-2");
}

}  // namespace
}  // namespace book::mem
