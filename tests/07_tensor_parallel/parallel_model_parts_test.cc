// The tensor-parallel model's parts (scaffolding tests, reference exercise bodies): the
// parameter and activation bytes per rank equal their formulas; pipeline stages of
// sequence-parallel ranks reproduce the one-device gradients; shapes the ranks cannot split and
// misused pieces are refused with messages that say why.
#include <gtest/gtest.h>

#include <span>
#include <string>
#include <vector>

#include "chapters/03_collectives/threads.h"
#include "chapters/07_tensor_parallel/accounting.h"
#include "chapters/07_tensor_parallel/tensor_parallel_group.h"
#include "chapters/07_tensor_parallel/tensor_parallel_seam.h"
#include "chapters/07_tensor_parallel/vocab_parallel.h"
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

TEST(ParallelModel, ARankHoldsItsShardOfTheParametersAndOfTheActivations) {
  const train::Config config = tiny_config();
  const int max_batch = 4;  // 4 × 5 = 20 tokens: 1, 2 and 4 ranks hold equal shares
  for (int t : {1, 2, 4})
    for (SequenceParallel sp : {SequenceParallel::kOff, SequenceParallel::kOn}) {
      SCOPED_TRACE(label(t, sp));
      coll::run_ranks(t, [&](coll::Communicator& comm) {
        TensorParallelGroup<double> group(comm);
        MemoryTracker tracker;
        const train::ModelPart part(0, -1, {comm.rank(), t});
        testing::TensorParallelRank model_rank(config, max_batch, part, sp, &group, &tracker);
        train::Model<double>& model = model_rank.model;
        const std::size_t params = parameter_elements(config, part) * sizeof(double);
        EXPECT_EQ(tracker.current(MemoryCategory::kParameters), params);
        EXPECT_EQ(tracker.current(MemoryCategory::kGradients), params);
        train::Activations<double> acts(model);
        for (int l = 0; l < config.n_layer; ++l)
          EXPECT_EQ(acts.layer_bytes(l), layer_activation_bytes(config, max_batch, config.context,
                                                                t, sp, sizeof(double)))
              << "layer " << l;
        EXPECT_EQ(tracker.current(MemoryCategory::kActivations), acts.bytes());
      });
    }
  // The whole model at t = 1 holds every parameter; 1/t of the sharded ones at t.
  EXPECT_EQ(parameter_elements(config, {}), static_cast<std::size_t>(config.parameter_count()));
  const std::size_t c = config.d_model;
  EXPECT_EQ(parameter_elements(config, {0, -1, {0, 4}}),
            (config.vocab_size * c) / 4 + config.context * c +
                config.n_layer * ((12 * c * c + 7 * c) / 4 + 6 * c) + 2 * c);
}

TEST(ParallelModel, StagesOfRanksReproduceTheWholeModel) {
  // Pipeline × tensor × sequence parallel, as chapter 8 composes it: stage 0 holds layer 0 with
  // the embeddings, stage 1 layers 1-2 with the head, each on 2 ranks with sequence parallelism.
  // Rank r of a stage sends its 1/t of the residual stream to rank r of the next.
  const train::Config config = tiny_config();
  const train::Batch batch = tiny_batch(91);
  const WholeRun want = whole_run(config, batch, 92);
  constexpr int kRanks = 2;
  const SequenceParallel sp = SequenceParallel::kOn;
  const train::ModelPart stages[2] = {{0, 1}, {1, 3}};
  std::vector<double> losses(kRanks, kNaN);
  const std::size_t shard =
      static_cast<std::size_t>(batch.batch) * batch.seq_len / kRanks * config.d_model;
  std::vector<std::vector<double>> grads[2] = {std::vector<std::vector<double>>(kRanks),
                                               std::vector<std::vector<double>>(kRanks)};
  // Four thread ranks: world ranks 0-1 are stage 0, 2-3 stage 1; each stage's pair is its
  // tensor-parallel group, and a stage sends to the same tensor-parallel rank of the other.
  coll::run_ranks(2 * kRanks, [&](coll::Communicator& world) {
    const int s = world.rank() / kRanks;  // stage
    auto tp = world.split(s, world.rank());
    const int r = tp->rank();
    TensorParallelGroup<double> group(*tp);
    const train::ModelPart part(stages[s].first_layer, stages[s].last_layer, {r, kRanks});
    testing::TensorParallelRank model_rank(config, batch.batch, part, sp, &group);
    train::Model<double>& model = model_rank.model;
    train::copy_from_whole<double>(want.layout, want.params, model.layout(), model.params().span());
    train::Activations<double> a(model);
    model.zero_grad();
    const int peer = (1 - s) * kRanks + r;  // the same tensor-parallel rank of the other stage
    std::vector<double> buffer(shard);
    if (s == 0) {
      model.embed_forward(a, batch.tokens.data(), batch.batch, batch.seq_len);
      model.layers_forward(a, 0, 1);
      world.send(std::span<const double>(a.residual(1), shard), peer, 1);
      world.recv(std::span<double>(buffer), peer, 2);
      std::copy(buffer.begin(), buffer.end(), a.residual_grad(1));
      model.layers_backward(a, 1, 0);
      model.embed_backward(a);
    } else {
      a.set_shape(batch.batch, batch.seq_len);
      world.recv(std::span<double>(buffer), peer, 1);
      std::copy(buffer.begin(), buffer.end(), a.residual(1));
      model.layers_forward(a, 1, 3);
      losses[r] = model.head_forward(a, batch.targets.data());
      model.head_backward(a, 1.0);
      model.layers_backward(a, 3, 1);
      world.send(std::span<const double>(a.residual_grad(1), shard), peer, 2);
    }
    model.finish_gradients();
    grads[s][r].assign(model.grads().begin(), model.grads().end());
    // The tied wte: the first stage's embedding use plus the last stage's head use (what a
    // pipeline all-reduces between its first and last stage).
    const train::TensorSlot& wte = model.layout().find("wte");
    std::vector<double> other(wte.size());
    world.sendrecv(std::span<const double>(grads[s][r].data() + wte.offset, wte.size()), peer,
                   std::span<double>(other), peer, 3);
    for (std::size_t i = 0; i < wte.size(); ++i) grads[s][r][wte.offset + i] += other[i];
  });
  for (int r = 0; r < kRanks; ++r)
    EXPECT_NEAR(losses[r], want.loss, kTolerance * want.loss) << "rank " << r << " of stage 1";
  std::vector<train::ParameterLayout> layouts;
  std::vector<std::vector<double>> all;
  for (int s = 0; s < 2; ++s)
    for (int r = 0; r < kRanks; ++r) {
      layouts.emplace_back(
          config, train::ModelPart(stages[s].first_layer, stages[s].last_layer, {r, kRanks, true}));
      all.push_back(grads[s][r]);
    }
  testing::expect_rank_gradients(want.layout, want.grads, layouts, all, kTolerance);
}

TEST(ParallelModel, RefusesShapesTheRanksCannotSplit) {
  using book::testing::expect_error;
  const train::Config config = tiny_config();  // 4 heads, vocabulary 12
  coll::run_ranks(3, [&](coll::Communicator& comm) {
    TensorParallelGroup<double> group(comm);
    expect_error(
        [&] {
          testing::TensorParallelRank(config, 1, {0, -1, {comm.rank(), 3}}, SequenceParallel::kOff,
                                      &group);
        },
        "3 tensor-parallel ranks cannot split 4 heads evenly");
  });
  train::Config odd_vocabulary = config;
  odd_vocabulary.vocab_size = 10;
  coll::run_ranks(4, [&](coll::Communicator& comm) {
    TensorParallelGroup<double> group(comm);
    expect_error(
        [&] {
          testing::TensorParallelRank(odd_vocabulary, 1, {0, -1, {comm.rank(), 4}},
                                      SequenceParallel::kOff, &group);
        },
        {"4 tensor-parallel ranks cannot split a vocabulary of 10 tokens evenly",
         "pad the vocabulary"});
    testing::TensorParallelRank model_rank(config, 2, {0, -1, {comm.rank(), 4}},
                                           SequenceParallel::kOn, &group);
    train::Model<double>& model = model_rank.model;
    train::Activations<double> acts(model);
    const train::Batch five = tiny_batch(3, 2, 5);  // 10 tokens
    expect_error([&] { acts.set_shape(2, 5); },
                 {"splits the 10 tokens of a micro-batch over 4 tensor-parallel ranks unevenly",
                  "divisible by 4"});
    expect_error([&] { model.head_forward(acts, five.targets.data()); }, "no micro-batch yet");
  });
  expect_error(
      [&] {
        testing::TensorParallelRank(config, 1, {0, -1, {1, 2}}, SequenceParallel::kOff, nullptr);
      },
      "the seam is rank 0 of 1 but the part's slice is rank 1 of 2");
  coll::run_ranks(2, [&](coll::Communicator& comm) {
    TensorParallelGroup<double> group(comm);
    expect_error(
        [&] {
          testing::TensorParallelRank(config, 1, {0, -1, {1 - comm.rank(), 2}},
                                      SequenceParallel::kOff, &group);
        },
        "but the part's slice is rank");
  });
}

TEST(ParallelModel, RefusesMisusedPiecesSayingWhy) {
  using book::testing::expect_error;
  const train::Config config = tiny_config();
  expect_error([&] { testing::TensorParallelRank(config, 0); }, "max_batch must be >= 1, got 0");
  // A middle stage: layers 1..1, no embeddings, no head.
  testing::TensorParallelRank middle_rank(config, 2, {1, 2}, SequenceParallel::kOff, nullptr);
  train::Model<double>& middle = middle_rank.model;
  testing::TensorParallelRank whole_rank(config, 2), other_rank(config, 2);
  train::Model<double>& whole = whole_rank.model;
  train::Model<double>& other = other_rank.model;
  train::Activations<double> acts(middle), whole_acts(whole), others(other);
  const train::Batch batch = tiny_batch(4);
  expect_error([&] { middle.embed_forward(acts, batch.tokens.data(), 2, 4); },
               "starts at layer 1 and does not hold the embeddings");
  expect_error([&] { middle.embed_backward(acts); }, "no micro-batch yet");
  expect_error([&] { middle.layers_forward(others, 1, 2); }, "made for another Model");
  acts.set_shape(2, 4);
  expect_error([&] { middle.head_forward(acts, batch.targets.data()); }, "does not hold the head");
  expect_error([&] { middle.head_backward(acts, 1.0); }, "does not hold the head");
  expect_error([&] { middle.embed_backward(acts); }, "does not hold the embeddings");
  expect_error([&] { middle.layers_forward(acts, 0, 2); },
               "range [0, 2) is not inside this part's [1, 2)");
  expect_error([&] { middle.layers_backward(acts, 3, 1); },
               "range [1, 3) is not inside this part's [1, 2)");
  expect_error([&] { acts.residual(3); }, "layer boundary 3 is outside this part's 1..2");
  expect_error([&] { acts.residual_grad(0); }, "layer boundary 0 is outside this part's 1..2");
  expect_error([&] { acts.logits(); }, "has no LM head");
  expect_error([&] { acts.layer_bytes(2); }, "layer 2 is outside this part's 1..1");
  expect_error([&] { acts.set_shape(3, 4); }, "batch 3 is outside 1..2");
  expect_error([&] { acts.set_shape(1, 6); }, "seq_len 6 is outside 1..5 (the context)");
  std::vector<int> bad_tokens = batch.tokens;
  bad_tokens[3] = 12;
  expect_error([&] { whole.embed_forward(whole_acts, bad_tokens.data(), 2, 4); },
               "token 12 at position 3 is outside the vocabulary 0..11");
  std::vector<int> bad_targets = batch.targets;
  bad_targets[5] = -2;
  whole.embed_forward(whole_acts, batch.tokens.data(), 2, 4);
  whole.layers_forward(whole_acts, 0, config.n_layer);
  expect_error([&] { whole.head_forward(whole_acts, bad_targets.data()); },
               "target -2 at row 5 is neither -1 nor a token id");
  whole.head_forward(whole_acts, nullptr);
  expect_error([&] { whole.head_backward(whole_acts, 1.0); },
               "the last forward had no targets, so there is no loss");
  // Chapter 4's block on its own checks its seam and its buffers.
  coll::run_ranks(2, [&](coll::Communicator& comm) {
    TensorParallelGroup<double> group(comm);
    TensorParallelSeam<double> seam(config, 1, &group, SequenceParallel::kOff);
    TensorParallelSeam<double> seam_on(config, 1, &group, SequenceParallel::kOn);
    const train::TensorParallelSlice slice{1 - comm.rank(), 2};
    train::BlockActivations<double> block_acts(config, slice, 1, 4, nullptr, true, &seam);
    train::BlockWorkspace<double> workspace(config, slice, 1, 4);
    const train::BlockTensors<double> none;
    std::vector<double> x(4 * 12), y(4 * 12);
    expect_error(
        [&] {
          train::block_forward(config, slice, none, 1, 4, x.data(), y.data(), block_acts, workspace,
                               &seam);
        },
        "block_forward: the seam is rank");
    const train::TensorParallelSlice mine{comm.rank(), 2};
    train::BlockActivations<double> small(config, mine, 1, 4, nullptr, true, &seam);
    train::BlockWorkspace<double> small_workspace(config, mine, 1, 4);
    expect_error(
        [&] {
          train::block_forward(config, mine, none, 2, 4, x.data(), y.data(), small, small_workspace,
                               &seam);
        },
        "2 × 4 rows do not fit the activations (1 × 4)");
    train::BlockActivations<double> held_half(config, mine, 1, 4, nullptr, true, &seam_on);
    expect_error(
        [&] {
          train::block_forward(config, mine, none, 1, 4, x.data(), y.data(), held_half,
                               small_workspace, &seam);
        },
        "sized for another split of the rows between ranks");
  });
  expect_error([&] { parameter_elements(config, {0, -1, {0, 5}}); }, "5 tensor-parallel ranks");
  expect_error([] { ring_elements_sent({}, 2, 2); }, "ring_elements_sent: rank 2 of 2");
}

// An id outside the vocabulary (8 ids over 2 ranks here) is on no rank: every rank added zeros
// for it and the token silently embedded as its position alone.
TEST(VocabParallelEmbedding, RefusesIdsOutsideTheVocabulary) {
  coll::run_ranks(2, [](coll::Communicator& comm) {
    TensorParallelGroup<double> group(comm);
    const int channels = 3, rows = 4;  // 4 ids per rank
    const std::vector<double> wte(rows * channels, 0.5), wpe(2 * channels, 0.25);
    const VocabularyShard<double> shard{wte.data(), comm.rank() * rows, rows};
    std::vector<double> partial(2 * channels), out(2 * channels);
    for (int bad : {8, -1}) {
      const std::vector<int> tokens = {1, bad};
      book::testing::expect_error(
          [&] {
            vocab_parallel_embedding_forward(tokens.data(), 1, 2, shard, wpe.data(), channels,
                                             partial.data(), out.data(), group,
                                             SequenceParallel::kOff);
          },
          {"token 1 is id " + std::to_string(bad), "vocabulary of 8 ids"});
    }
  });
}

}  // namespace
}  // namespace book::tp
