// The pieces under the model (scaffolding tests): TensorParallelGroup's collectives and counts
// over chapter 3's threads backend;
// the one-rank LocalGroup; the conjugate operators' sizes; and the formulas' internal agreement
// (Megatron-LM's per-layer activation formula without its dropout terms is ours without the
// LayerNorm statistics).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "chapters/03_collectives/threads.h"
#include "chapters/04_training_baseline/model.h"
#include "chapters/04_training_baseline/parameter_copy.h"
#include "chapters/04_training_baseline/step.h"
#include "chapters/07_tensor_parallel/accounting.h"
#include "chapters/07_tensor_parallel/conjugate.h"
#include "chapters/07_tensor_parallel/tensor_parallel_seam.h"
#include "chapters/07_tensor_parallel/tensor_parallel_group.h"
#include "common/testing/expect_error.h"
#include "tests/07_tensor_parallel/tp_testing.h"

namespace book::tp {
namespace {

using book::testing::expect_error;
using testing::kNaN;

TEST(TensorParallelGroup, SumsScattersAndGathersInRankOrderAndCountsThem) {
  for (int t : {1, 2, 3, 4}) {
    const std::size_t per = 7;  // per rank: 7, an awkward count
    coll::run_ranks(t, [&](coll::Communicator& comm) {
      const int r = comm.rank();
      SCOPED_TRACE("rank " + std::to_string(r) + " of " + std::to_string(t));
      TensorParallelGroup<double> group(comm);
      EXPECT_EQ(group.rank(), r);
      EXPECT_EQ(group.size(), t);
      auto input = [](int rank, std::size_t i) { return 1.0 + 10.0 * rank + 0.25 * i; };
      std::vector<double> mine(t * per);
      for (std::size_t i = 0; i < mine.size(); ++i) mine[i] = input(r, i);
      std::vector<double> summed = mine, scattered(per, kNaN), gathered(t * per, kNaN);
      group.all_reduce(summed.data(), summed.size());
      group.reduce_scatter(mine.data(), scattered.data(), per);
      group.all_gather(mine.data(), gathered.data(), per);
      for (std::size_t i = 0; i < mine.size(); ++i) {
        double sum = 0;
        for (int q = 0; q < t; ++q) sum += input(q, i);
        ASSERT_NEAR(summed[i], sum, 1e-12) << "all_reduce element " << i;
        ASSERT_EQ(gathered[i], input(static_cast<int>(i / per), i % per)) << "all_gather " << i;
      }
      for (std::size_t i = 0; i < per; ++i) {
        double sum = 0;
        for (int q = 0; q < t; ++q) sum += input(q, r * per + i);
        ASSERT_NEAR(scattered[i], sum, 1e-12) << "reduce_scatter element " << i;
      }
      const CollectiveCounts counts = group.counts();
      EXPECT_EQ(counts.calls(), 3);
      EXPECT_EQ(counts.all_reduce_elements, t * per);
      EXPECT_EQ(counts.reduce_scatter_elements, t * per);
      EXPECT_EQ(counts.all_gather_elements, t * per);
      const std::vector<CollectiveCall> calls = {{Collective::kAllReduce, t * per, ""},
                                                 {Collective::kReduceScatter, t * per, ""},
                                                 {Collective::kAllGather, t * per, ""}};
      EXPECT_EQ(group.communicator().counters().bytes_sent,
                ring_elements_sent(calls, t, r) * sizeof(double))
          << "the ring's exact volumes";
      group.reset_counts();
      EXPECT_EQ(group.counts().calls(), 0);
    });
  }
}

TEST(LocalGroup, IsAGroupOfOneThatCopies) {
  LocalGroup<float> group;
  EXPECT_EQ(group.rank(), 0);
  EXPECT_EQ(group.size(), 1);
  std::vector<float> in = {1, 2, 3}, out(3, -1);
  group.all_reduce(in.data(), 3);
  EXPECT_EQ(in, (std::vector<float>{1, 2, 3}));
  group.reduce_scatter(in.data(), out.data(), 3);
  EXPECT_EQ(out, in);
  std::fill(out.begin(), out.end(), -1.f);
  group.all_gather(in.data(), out.data(), 3);
  EXPECT_EQ(out, in);
}

TEST(ConjugateOperators, IdentityHalvesMoveNothingAndShardsMustFit) {
  coll::run_ranks(2, [&](coll::Communicator& comm) {
    TensorParallelGroup<double> group(comm);
    std::vector<double> x = {1.0 + comm.rank(), 2.0}, whole(4), shard(2);
    f_forward<double>(x, group);
    g_backward<double>(x, group);
    EXPECT_EQ(group.counts().calls(), 0) << "f's forward and g's backward are identities";
    f_backward<double>(x, group);
    g_forward<double>(x, group);
    EXPECT_EQ(group.counts().all_reduces, 2);
    EXPECT_EQ(x[0], 6.0) << "f's backward sums 1 + 2 = 3 over the ranks, g's forward 3 + 3";
    std::vector<double> three(3);
    expect_error([&] { gather_forward<double>(shard, three, group); },
                 "gather_forward: the whole buffer has 3 elements, but 2 shards of 2 make 4");
    expect_error([&] { scatter_forward<double>(three, shard, group); },
                 "scatter_forward: the whole buffer has 3 elements");
    expect_error([&] { gather_backward<double>(three, shard, group); },
                 "gather_backward: the whole buffer has 3 elements");
    expect_error([&] { scatter_backward<double>(shard, three, group); },
                 "scatter_backward: the whole buffer has 3 elements");
  });
}

TEST(SequenceParallel, NeedsTheTokensToSplitEvenly) {
  EXPECT_EQ(held_tokens(12, 4, SequenceParallel::kOn), 3);
  EXPECT_EQ(held_tokens(10, 4, SequenceParallel::kOff), 10);
  expect_error([] { held_tokens(10, 4, SequenceParallel::kOn); },
               {"splits the 10 tokens of a micro-batch over 4 tensor-parallel ranks unevenly",
                "divisible by 4"});
}

TEST(Accounting, MegatronsFormulaWithoutDropoutIsOursWithoutLayerNormStatistics) {
  const train::Config config = testing::tiny_config();  // h = 12, a = 4
  for (int t : {1, 2, 4})
    for (SequenceParallel sp : {SequenceParallel::kOff, SequenceParallel::kOn}) {
      const int b = 3, s = 4;  // 12 tokens
      const double held = sp == SequenceParallel::kOn ? 12.0 / t : 12.0;
      const double ours = static_cast<double>(layer_activation_bytes(config, b, s, t, sp, 1));
      EXPECT_DOUBLE_EQ(ours - 4 * held, megatron_without_dropout_elements(s, b, config.d_model,
                                                                          config.n_head, t, sp))
          << "t = " << t << ", sequence parallelism " << sequence_parallel_name(sp);
    }
  // Megatron's own: t = 1 is sbh(34 + 5as/h) either way; sequence parallelism divides all of it.
  const double s = 2048, b = 1, h = 12288, a = 96, sbh = s * b * h;
  EXPECT_DOUBLE_EQ(megatron_layer_activation_bytes(s, b, h, a, 1, SequenceParallel::kOff),
                   sbh * (34 + 5 * a * s / h));
  EXPECT_DOUBLE_EQ(megatron_layer_activation_bytes(s, b, h, a, 1, SequenceParallel::kOn),
                   sbh * (34 + 5 * a * s / h));
  EXPECT_DOUBLE_EQ(megatron_layer_activation_bytes(s, b, h, a, 8, SequenceParallel::kOff) -
                       megatron_layer_activation_bytes(s, b, h, a, 8, SequenceParallel::kOn),
                   10 * sbh * (1 - 1.0 / 8))
      << "what sequence parallelism saves: the 10sbh tensor parallelism leaves replicated, 7/8 of "
         "it";
}

// t = 0 divided by zero, t = -1 wrapped to a huge size_t, and t = 3 against 4 heads rounded
// H/t down to 1 without a word; with sequence parallelism 12 tokens over t = 8 rounded N/t to 1.
TEST(Accounting, LayerActivationBytesRefusesATensorParallelSizeThatDoesNotSplit) {
  const train::Config config = testing::tiny_config();  // h = 12, a = 4
  for (int t : {0, -1, 3})
    expect_error([&] { layer_activation_bytes(config, 3, 4, t, SequenceParallel::kOff, 4); },
                 {"layer_activation_bytes: t = " + std::to_string(t), "divide the 4 heads"});
  train::Config eight_heads = config;
  eight_heads.n_head = 8;
  expect_error([&] { layer_activation_bytes(eight_heads, 3, 4, 8, SequenceParallel::kOn, 4); },
               {"t = 8 must divide the 12 tokens", "batch 3 x seq_len 4"});
  expect_error([&] { layer_activation_bytes(config, 0, 4, 2, SequenceParallel::kOff, 4); },
               "batch 0 and seq_len 4 must be >= 1");
}

}  // namespace
}  // namespace book::tp
