// Scaffolding test of block_split.h (added for chapter 8's zero-bubble schedule): every block's
// backward run as B (block_backward_input) and, later, W (block_backward_weight) gives exactly the
// bits of Model::backward, for two micro-batches whose W's run after both B's, in float and
// double.
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "chapters/04_training_baseline/model.h"
#include "chapters/04_training_baseline/parameters.h"
#include "chapters/08_pipeline_parallel/block_split.h"
#include "common/rng.h"
#include "common/testing/expect_error.h"

namespace book::pp {
namespace {

using namespace book::train;

struct MicroBatch {
  std::vector<int> tokens, targets;
};

template <typename T>
void check_split_equals_whole() {
  Config config;
  config.vocab_size = 11, config.context = 6, config.n_layer = 3, config.n_head = 2;
  config.d_model = 8;
  const int batch = 2, seq_len = 5;
  Rng rng(404);
  std::vector<MicroBatch> micro(2);
  for (auto& mb : micro)
    for (int i = 0; i < batch * seq_len; ++i) {
      mb.tokens.push_back(static_cast<int>(rng.uniform_int(0, config.vocab_size - 1)));
      mb.targets.push_back(static_cast<int>(rng.uniform_int(0, config.vocab_size - 1)));
    }
  Model<T> whole(config, batch), split(config, batch);
  whole.init(405), split.init(405);
  whole.zero_grad(), split.zero_grad();
  for (const auto& mb : micro) {
    Activations<T> acts(whole);
    whole.forward(acts, mb.tokens.data(), mb.targets.data(), batch, seq_len);
    whole.backward(acts, T(0.5));
  }

  const ModelTensors<T> p = bind(split.layout(), split.params().data());
  const ModelTensors<T> g = bind(split.layout(), split.grads().data());
  BlockWorkspace<T> ws(config, {}, batch, config.context);
  std::vector<std::unique_ptr<Activations<T>>> acts;
  std::vector<std::vector<WeightGradientInputs<T>>> keep(micro.size());
  for (std::size_t m = 0; m < micro.size(); ++m) {  // B of every micro-batch first
    acts.push_back(std::make_unique<Activations<T>>(split));
    Activations<T>& a = *acts.back();
    split.forward(a, micro[m].tokens.data(), micro[m].targets.data(), batch, seq_len);
    split.head_backward(a, T(0.5));
    for (int l = config.n_layer - 1; l >= 0; --l) {
      keep[m].emplace_back(config, TensorParallelSlice{}, batch, config.context);
      block_backward_input(config, {}, p.blocks[l], g.blocks[l], batch, seq_len, a.residual(l),
                           a.residual_grad(l + 1), a.residual_grad(l), a.block(l), ws,
                           keep[m].back());
    }
    split.embed_backward(a);
  }
  for (std::size_t m = 0; m < micro.size(); ++m)  // then every W, in micro-batch order
    for (int l = config.n_layer - 1; l >= 0; --l)
      block_backward_weight(config, {}, p.blocks[l], g.blocks[l], batch, seq_len, acts[m]->block(l),
                            keep[m][config.n_layer - 1 - l]);
  ASSERT_EQ(whole.grads().size(), split.grads().size());
  for (std::size_t i = 0; i < whole.grads().size(); ++i)
    ASSERT_EQ(std::memcmp(&whole.grads()[i], &split.grads()[i], sizeof(T)), 0)
        << "gradient element " << i << ": whole " << whole.grads()[i] << ", B then W "
        << split.grads()[i];

  WeightGradientInputs<T> small(config, {}, 1, 2);
  testing::expect_error(
      [&] {
        block_backward_weight(config, {}, p.blocks[0], g.blocks[0], batch, seq_len,
                              acts[0]->block(0), small);
      },
      {"block_backward_weight", "2 × 5 rows do not fit", "(2 rows)"});

  // The split runs whole blocks only: a tensor-parallel slice's B would need the seam's
  // collectives between its pieces.
  BlockActivations<T> half(config, {0, 2}, batch, seq_len);
  WeightGradientInputs<T> half_keep(config, {0, 2}, batch, seq_len);
  std::vector<T> x(static_cast<std::size_t>(batch) * seq_len * config.d_model, T(0.5));
  std::vector<T> dx(x.size());
  testing::expect_error(
      [&] {
        block_backward_input(config, {0, 2}, p.blocks[0], g.blocks[0], batch, seq_len, x.data(),
                             x.data(), dx.data(), half, ws, half_keep);
      },
      "the split backward runs whole blocks (slice 0 of 1); this is tensor-parallel slice 0 of 2");
}

TEST(BlockSplit, InputThenWeightEqualsBlockBackwardFloat) { check_split_equals_whole<float>(); }
TEST(BlockSplit, InputThenWeightEqualsBlockBackwardDouble) { check_split_equals_whole<double>(); }

}  // namespace
}  // namespace book::pp
