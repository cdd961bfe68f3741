// Graded tests of tensor parallelism (they run every layer's backward, recorded under
// train.attention_backward): 2 and 4 ranks, each storing only its shard of each block and
// talking through an in-process group, reproduce the whole block's and the whole model's
// outputs and gradients (double precision, tolerance 1e-12 relative), with exactly 2 all-reduces
// of B·T·C elements per block forward and 2 backward.
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "chapters/04_training_baseline/block.h"
#include "chapters/04_training_baseline/parameter_copy.h"
#include "chapters/04_training_baseline/step.h"
#include "common/testing/exercise.h"
#include "tests/04_training_baseline/fake_group.h"
#include "tests/04_training_baseline/gradcheck.h"
#include "tests/04_training_baseline/tiny_model.h"

namespace book::train {
namespace {

using testing::expect_close;
using testing::FakeGroup;
using testing::tiny_batch;
using testing::tiny_config;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Compares each rank's gradients, put back in place in the whole layout, with the whole model's
// over the slots `in_scope` accepts; every element must be held by at least one rank.
void expect_rank_gradients(const ParameterLayout& whole, const std::vector<double>& want,
                           const std::vector<ParameterLayout>& layouts,
                           const std::vector<std::vector<double>>& grads,
                           bool (*in_scope)(const std::string&)) {
  std::vector<bool> covered(whole.total(), false);
  for (std::size_t r = 0; r < layouts.size(); ++r) {
    std::vector<double> placed(whole.total(), kNaN);
    copy_to_whole<double>(layouts[r], grads[r], whole, placed);
    for (const auto& slot : whole.slots()) {
      if (!in_scope(slot.name)) continue;
      for (std::size_t i = slot.offset; i < slot.offset + slot.size(); ++i) {
        if (std::isnan(placed[i])) continue;  // another rank's shard
        covered[i] = true;
        ASSERT_NEAR(placed[i], want[i], 1e-12 * std::max(1.0, std::fabs(want[i])))
            << "rank " << r << " of " << layouts.size() << ": gradient of " << slot.name << "["
            << i - slot.offset << "]";
      }
    }
  }
  for (const auto& slot : whole.slots()) {
    if (!in_scope(slot.name)) continue;
    for (std::size_t i = slot.offset; i < slot.offset + slot.size(); ++i)
      ASSERT_TRUE(covered[i]) << slot.name << "[" << i - slot.offset << "] is held by no rank";
  }
}

EXERCISE_TEST("train.attention_backward", TensorParallel, RanksReproduceTheWholeBlock) {
  const Config config = tiny_config();  // 4 heads: 2 or 1 per rank
  const int batch = 2, seq_len = 5, n = batch * seq_len, c = config.d_model;
  Model<double> whole(config, batch);
  testing::randomise(whole, 94);
  Rng rng(95);
  const auto x = testing::random_vector(n * c, rng), dy = testing::random_vector(n * c, rng);

  // The whole block 0 on one device.
  std::vector<double> grads(whole.layout().total(), 0.0), y(n * c, kNaN), dx(n * c, kNaN);
  {
    BlockActivations<double> acts(config, {}, batch, seq_len);
    BlockWorkspace<double> workspace(config, {}, batch, seq_len);
    const auto w = bind(whole.layout(), whole.params().data());
    const auto g = bind(whole.layout(), grads.data());
    block_forward(config, {}, w.blocks[0], batch, seq_len, x.data(), y.data(), acts, workspace);
    block_backward(config, {}, w.blocks[0], g.blocks[0], batch, seq_len, x.data(), dy.data(),
                   dx.data(), acts, workspace);
  }

  for (int t : {2, 4}) {
    SCOPED_TRACE(std::to_string(t) + " tensor-parallel ranks");
    FakeGroup<double> group(t);
    std::vector<ParameterLayout> layouts;
    for (int r = 0; r < t; ++r) layouts.emplace_back(config, ModelPart{0, -1, {r, t}});
    std::vector<std::vector<double>> rank_grads(t), rank_y(t), rank_dx(t);
    group.run([&](int r) {
      const TensorParallelSlice slice{r, t};
      std::vector<double> params(layouts[r].total());  // only this rank's shard
      copy_from_whole<double>(whole.layout(), whole.params().span(), layouts[r], params);
      rank_grads[r].assign(layouts[r].total(), 0.0);
      rank_y[r].assign(n * c, kNaN);  // poisoned
      rank_dx[r].assign(n * c, kNaN);
      const auto w = bind(layouts[r], params.data());
      const auto g = bind(layouts[r], rank_grads[r].data());
      BlockActivations<double> acts(config, slice, batch, seq_len);
      BlockWorkspace<double> workspace(config, slice, batch, seq_len);
      block_forward(config, slice, w.blocks[0], batch, seq_len, x.data(), rank_y[r].data(), acts,
                    workspace, &group.rank(r));
      block_backward(config, slice, w.blocks[0], g.blocks[0], batch, seq_len, x.data(), dy.data(),
                     rank_dx[r].data(), acts, workspace, &group.rank(r));
    });
    for (int r = 0; r < t; ++r) {
      SCOPED_TRACE("rank " + std::to_string(r));
      expect_close("block output", y, rank_y[r], 1e-12);
      expect_close("input gradient", dx, rank_dx[r], 1e-12);
      EXPECT_EQ(group.counts(r).all_reduces, 4) << "2 in the forward pass, 2 in the backward";
      EXPECT_EQ(group.counts(r).all_reduce_elements, static_cast<std::size_t>(4 * n * c))
          << "each all-reduce carries B·T·C = " << n * c << " elements";
    }
    expect_rank_gradients(whole.layout(), grads, layouts, rank_grads,
                          [](const std::string& name) { return name.rfind("h0.", 0) == 0; });
  }
}

EXERCISE_TEST("train.attention_backward", TensorParallel, RanksReproduceTheWholeModel) {
  // Every block tensor-parallel, the embeddings and head replicated: each rank's loss and input
  // gradients equal the one-device run's, its shard of each gradient too, and the replicated
  // gradients are the same on every rank (so replicas stay equal after the optimizer).
  const Config config = tiny_config();
  const Batch b = tiny_batch(71);
  Model<double> whole(config, 2);
  testing::randomise(whole, 72);
  whole.zero_grad();
  const double loss = forward_backward(whole, b, 1.0);
  const std::vector<double> want(whole.grads().begin(), whole.grads().end());

  for (int t : {2, 4}) {
    SCOPED_TRACE(std::to_string(t) + " tensor-parallel ranks");
    FakeGroup<double> group(t);
    std::vector<ParameterLayout> layouts;
    std::vector<std::vector<double>> grads(t);
    std::vector<double> losses(t, kNaN);
    for (int r = 0; r < t; ++r) layouts.emplace_back(config, ModelPart{0, -1, {r, t}});
    group.run([&](int r) {
      ModelOptions<double> options;
      options.part = layouts[r].part();
      options.tensor_parallel = &group.rank(r);
      Model<double> model(config, 2, options);
      copy_from_whole<double>(whole.layout(), whole.params().span(), model.layout(),
                              model.params().span());
      model.zero_grad();
      losses[r] = forward_backward(model, b, 1.0);
      grads[r].assign(model.grads().begin(), model.grads().end());
    });
    for (int r = 0; r < t; ++r) EXPECT_NEAR(losses[r], loss, 1e-12 * loss) << "rank " << r;
    expect_rank_gradients(whole.layout(), want, layouts, grads,
                          [](const std::string&) { return true; });
    const TensorSlot& lnf = layouts[0].find("lnf_gain");
    for (int r = 1; r < t; ++r)
      for (std::size_t i = 0; i < lnf.size(); ++i)
        ASSERT_EQ(grads[r][lnf.offset + i], grads[0][lnf.offset + i])
            << "replicated lnf_gain's gradient differs between rank 0 and rank " << r;
  }
}

EXERCISE_TEST("train.attention_backward", TensorParallel, StagesOfRanksReproduceTheWholeModel) {
  // Pipeline × tensor parallel, as in chapter 8's 3D runs: stage 0 holds layer 0 (with the
  // embeddings), stage 1 layers 1-2 (with the head), each on 2 tensor-parallel ranks. Rank r of
  // a stage sends its residual stream to rank r of the next (the two ranks of a stage hold the
  // same activations after their all-reduces).
  const Config config = tiny_config();
  const Batch b = tiny_batch(81);
  Model<double> whole(config, 2);
  testing::randomise(whole, 82);
  whole.zero_grad();
  const double loss = forward_backward(whole, b, 1.0);
  const std::vector<double> want(whole.grads().begin(), whole.grads().end());

  constexpr int kRanks = 2;
  const ModelPart stage_layers[2] = {ModelPart(0, 1), ModelPart(1, 3)};
  FakeGroup<double> groups[2] = {FakeGroup<double>(kRanks), FakeGroup<double>(kRanks)};
  std::vector<std::unique_ptr<Model<double>>> models[2];
  std::vector<std::unique_ptr<Activations<double>>> acts[2];
  for (int s = 0; s < 2; ++s)
    for (int r = 0; r < kRanks; ++r) {
      ModelOptions<double> options;
      options.part =
          ModelPart(stage_layers[s].first_layer, stage_layers[s].last_layer, {r, kRanks});
      options.tensor_parallel = &groups[s].rank(r);
      models[s].push_back(std::make_unique<Model<double>>(config, 2, options));
      Model<double>& m = *models[s].back();
      copy_from_whole<double>(whole.layout(), whole.params().span(), m.layout(), m.params().span());
      m.zero_grad();
      acts[s].push_back(std::make_unique<Activations<double>>(m));
    }
  const std::size_t nc = static_cast<std::size_t>(b.batch) * b.seq_len * config.d_model;
  std::vector<double> losses(kRanks, kNaN);
  groups[0].run([&](int r) {
    models[0][r]->embed_forward(*acts[0][r], b.tokens.data(), b.batch, b.seq_len);
    models[0][r]->layers_forward(*acts[0][r], 0, 1);
  });
  groups[1].run([&](int r) {
    acts[1][r]->set_shape(b.batch, b.seq_len);
    std::copy(acts[0][r]->residual(1), acts[0][r]->residual(1) + nc, acts[1][r]->residual(1));
    models[1][r]->layers_forward(*acts[1][r], 1, 3);
    losses[r] = models[1][r]->head_forward(*acts[1][r], b.targets.data());
    models[1][r]->head_backward(*acts[1][r], 1.0);
    models[1][r]->layers_backward(*acts[1][r], 3, 1);
  });
  groups[0].run([&](int r) {
    std::copy(acts[1][r]->residual_grad(1), acts[1][r]->residual_grad(1) + nc,
              acts[0][r]->residual_grad(1));
    models[0][r]->layers_backward(*acts[0][r], 1, 0);
    models[0][r]->embed_backward(*acts[0][r]);
  });
  for (int r = 0; r < kRanks; ++r) {
    EXPECT_NEAR(losses[r], loss, 1e-12 * loss) << "rank " << r << " of the last stage";
    // The tied wte: the first stage's embedding use plus the last stage's head use.
    const auto first = models[0][r]->tied_embedding_grad(),
               last = models[1][r]->tied_embedding_grad();
    for (std::size_t i = 0; i < first.size(); ++i) first[i] = last[i] = first[i] + last[i];
  }
  std::vector<ParameterLayout> layouts;
  std::vector<std::vector<double>> grads;
  for (int s = 0; s < 2; ++s)
    for (int r = 0; r < kRanks; ++r) {
      layouts.push_back(models[s][r]->layout());
      grads.emplace_back(models[s][r]->grads().begin(), models[s][r]->grads().end());
    }
  expect_rank_gradients(whole.layout(), want, layouts, grads,
                        [](const std::string&) { return true; });
}

}  // namespace
}  // namespace book::train
