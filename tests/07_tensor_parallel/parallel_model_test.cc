// The tensor-parallel model against chapter 4's one-device model (scaffolding tests, reference
// exercise bodies, so they pass on both tracks): at t = 1, 2 and 4 ranks, sequence parallelism
// off and on, each rank holding only its shard, the loss and every gradient equal the one-device
// run's within 1e-11 relative in double precision (the ranks sum partial products in another
// order, so not bit for bit); the collectives of a step and of each layer are the formula's,
// exactly, and so are the bytes each rank sends over chapter 3's ring.
#include <gtest/gtest.h>

#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "chapters/03_collectives/threads.h"
#include "chapters/07_tensor_parallel/accounting.h"
#include "chapters/07_tensor_parallel/tensor_parallel_seam.h"
#include "common/testing/expect_error.h"
#include "tests/07_tensor_parallel/model_runs.h"
#include "tests/07_tensor_parallel/tp_testing.h"

namespace book::tp {
namespace {

using testing::kNaN;
using testing::label;
using testing::tiny_batch;
using testing::tiny_config;
using testing::whole_run;
using testing::WholeRun;

constexpr double kTolerance = testing::kModelTolerance;

TEST(ParallelModel, RanksReproduceTheOneDeviceLossAndGradients) {
  const train::Config config = tiny_config();
  const train::Batch batch = tiny_batch(71);
  const WholeRun want = whole_run(config, batch, 72);
  for (int t : {1, 2, 4})
    for (SequenceParallel sp : {SequenceParallel::kOff, SequenceParallel::kOn}) {
      SCOPED_TRACE(label(t, sp));
      std::vector<train::ParameterLayout> layouts;
      std::vector<std::vector<double>> grads(t);
      std::vector<double> losses(t, kNaN);
      coll::run_ranks(t, [&](coll::Communicator& comm) {
        TensorParallelGroup<double> group(comm);
        testing::TensorParallelRank model_rank(config, batch.batch, {0, -1, {comm.rank(), t}}, sp,
                                               &group);
        train::Model<double>& model = model_rank.model;
        train::copy_from_whole<double>(want.layout, want.params, model.layout(),
                                       model.params().span());
        train::Activations<double> acts(model);
        model.zero_grad();
        losses[comm.rank()] = train::forward_backward(model, batch, 1.0, acts);
        model.finish_gradients();
        grads[comm.rank()].assign(model.grads().begin(), model.grads().end());
      });
      for (int r = 0; r < t; ++r) {
        layouts.emplace_back(config, train::ModelPart(0, -1, {r, t, true}));
        EXPECT_NEAR(losses[r], want.loss, kTolerance * want.loss) << "rank " << r;
      }
      testing::expect_rank_gradients(want.layout, want.grads, layouts, grads, kTolerance);
      // Replicated tensors must get the same gradient, bit for bit, on every rank: otherwise
      // their copies drift apart after the optimizer.
      for (const auto& slot : layouts[0].slots()) {
        if (slot.split != train::TensorParallelSplit::kReplicated) continue;
        for (int r = 1; r < t; ++r)
          ASSERT_EQ(std::memcmp(grads[r].data() + slot.offset, grads[0].data() + slot.offset,
                                slot.size() * sizeof(double)),
                    0)
              << "the replicated " << slot.name << "'s gradient differs on rank " << r;
      }
    }
}

TEST(ParallelModel, EachStepAndEachLayerMovesExactlyWhatTheFormulaSays) {
  // 2 all-reduces of B·S·C elements per layer forward and 2 backward without sequence
  // parallelism; with it, reduce-scatters and all-gathers of the same sizes, and 2 more
  // all-gathers per layer backward (the LayerNorm outputs, gathered again).
  const train::Config config = tiny_config();
  const train::Batch batch = tiny_batch(81);
  const std::uint64_t n = static_cast<std::uint64_t>(batch.batch) * batch.seq_len;
  const std::vector<double> params = testing::random_parameters(train::ParameterLayout(config), 82);
  for (int t : {2, 4})
    for (SequenceParallel sp : {SequenceParallel::kOff, SequenceParallel::kOn}) {
      SCOPED_TRACE(label(t, sp));
      coll::run_ranks(t, [&](coll::Communicator& comm) {
        TensorParallelGroup<double> group(comm);
        testing::TensorParallelRank model_rank(config, batch.batch, {0, -1, {comm.rank(), t}}, sp,
                                               &group);
        train::Model<double>& model = model_rank.model;
        train::copy_from_whole<double>(train::ParameterLayout(config), params, model.layout(),
                                       model.params().span());
        train::Activations<double> acts(model);
        // One layer, forward and backward, through the pieces.
        model.embed_forward(acts, batch.tokens.data(), batch.batch, batch.seq_len);
        const CollectiveCounts before_forward = group.counts();
        const std::uint64_t sent_before = comm.counters().bytes_sent;
        model.layers_forward(acts, 0, 1);
        const auto forward = layer_forward_collectives(n, config.d_model, sp);
        testing::expect_counts(count(forward), group.counts().since(before_forward),
                               "one layer's forward pass, rank " + std::to_string(comm.rank()));
        EXPECT_EQ(comm.counters().bytes_sent - sent_before,
                  ring_elements_sent(forward, t, comm.rank()) * sizeof(double))
            << "bytes rank " << comm.rank() << " sent in one layer's forward pass";
        if (sp == SequenceParallel::kOff) {
          EXPECT_EQ(count(forward).all_reduces, 2);
          EXPECT_EQ(count(forward).all_reduce_elements, 2 * n * config.d_model)
              << "2 all-reduces of exactly b·s·h elements";
        }
        model.layers_forward(acts, 1, config.n_layer);
        model.head_forward(acts, batch.targets.data());
        model.head_backward(acts, 1.0);
        model.layers_backward(acts, config.n_layer, 1);
        const CollectiveCounts before_backward = group.counts();
        const std::uint64_t sent_before_backward = comm.counters().bytes_sent;
        model.layers_backward(acts, 1, 0);
        const auto backward = layer_backward_collectives(n, config.d_model, sp);
        testing::expect_counts(count(backward), group.counts().since(before_backward),
                               "one layer's backward pass, rank " + std::to_string(comm.rank()));
        EXPECT_EQ(comm.counters().bytes_sent - sent_before_backward,
                  ring_elements_sent(backward, t, comm.rank()) * sizeof(double));
        model.embed_backward(acts);
        model.finish_gradients();
        // The whole step.
        const auto step = step_collectives(config, batch.batch, batch.seq_len, t, sp);
        testing::expect_counts(count(step), group.counts(), "one step");
        EXPECT_EQ(comm.counters().bytes_sent,
                  ring_elements_sent(step, t, comm.rank()) * sizeof(double))
            << "bytes rank " << comm.rank() << " sent in one step";
        // The cross-entropy moves O(rows), never the [rows, V] logits: N·t row maxima and 2N sums.
        std::uint64_t cross_entropy = 0;
        for (const auto& call : step)
          if (call.what.rfind("cross-entropy", 0) == 0) cross_entropy += call.elements;
        EXPECT_EQ(cross_entropy, n * (t + 2));
        EXPECT_LT(cross_entropy, n * config.vocab_size);
      });
    }
}

TEST(ParallelModel, SequenceParallelSendsTheSameBytesForwardAsTheAllReduces) {
  // A ring all-reduce is a reduce-scatter then an all-gather: the forward pass of a layer sends
  // exactly the same bytes either way; the backward pass sends 2 more all-gathers' worth with
  // sequence parallelism (the re-gathered LayerNorm outputs).
  const std::uint64_t n = 8;
  const int c = 12;
  for (int t : {2, 4})
    for (int r = 0; r < t; ++r) {
      const auto off = layer_forward_collectives(n, c, SequenceParallel::kOff);
      const auto on = layer_forward_collectives(n, c, SequenceParallel::kOn);
      EXPECT_EQ(ring_elements_sent(off, t, r), ring_elements_sent(on, t, r)) << "t = " << t;
      EXPECT_EQ(ring_elements_sent(off, t, r), 4 * (t - 1) * n * c / t);
      const auto back_off = layer_backward_collectives(n, c, SequenceParallel::kOff);
      const auto back_on = layer_backward_collectives(n, c, SequenceParallel::kOn);
      EXPECT_EQ(ring_elements_sent(back_on, t, r),
                ring_elements_sent(back_off, t, r) + 2 * (t - 1) * n * c / t);
    }
}

}  // namespace
}  // namespace book::tp
