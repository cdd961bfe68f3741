// Tests of the model's partition scaffolding (not exercises): the layouts of pipeline stages and
// tensor-parallel ranks, the bytes each rank holds (counted), the copies to and from the whole
// model, the initialisation of a part, and the argument checks. They pass on both tracks.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "chapters/04_training_baseline/model.h"
#include "chapters/04_training_baseline/parameter_copy.h"
#include "common/testing/expect_error.h"
#include "tests/04_training_baseline/gradcheck.h"
#include "tests/04_training_baseline/rank_seam.h"
#include "tests/04_training_baseline/tiny_model.h"

namespace book::train {
namespace {

using book::testing::expect_error;
using testing::tiny_config;

std::vector<std::string> names(const ParameterLayout& layout) {
  std::vector<std::string> out;
  for (const auto& slot : layout.slots()) out.push_back(slot.name);
  return out;
}

TEST(StageLayout, EachStageHoldsItsLayersAndTheTiedMatrixSitsAtBothEnds) {
  const Config c = tiny_config();  // 3 layers
  const ParameterLayout first(c, {0, 1}), middle(c, {1, 2}), last(c, {2, 3}), whole(c);
  EXPECT_EQ(names(first).front(), "wte");
  EXPECT_EQ(names(first)[1], "wpe");
  EXPECT_EQ(names(first).back(), "h0.b_proj");
  EXPECT_EQ(names(middle).front(), "h1.ln1_gain");
  EXPECT_EQ(names(middle).back(), "h1.b_proj");
  EXPECT_EQ(names(last).back(), "wte") << "the last stage's copy of the LM head comes last";
  EXPECT_FALSE(middle.contains("wte"));
  const std::size_t block = whole.layer_range(1).second - whole.layer_range(1).first;
  const std::size_t cc = c.d_model, embeddings = (c.vocab_size + c.context) * cc;
  EXPECT_EQ(middle.total(), block);
  EXPECT_EQ(first.total(), embeddings + block);
  EXPECT_EQ(last.total(), block + 2 * cc + c.vocab_size * cc);
  EXPECT_EQ(last.head_range(), std::make_pair(last.find("lnf_gain").offset, last.total()));
  EXPECT_EQ(first.embedding_range(), std::make_pair(std::size_t{0}, embeddings));
  expect_error([&] { middle.head_range(); }, "does not hold the final LayerNorm");
  expect_error([&] { last.embedding_range(); }, "does not hold the embeddings");
  expect_error([&] { middle.layer_range(0); }, "no layer 0 in this part (it holds layers 1..1)");
  expect_error([&] { middle.find("wte"); }, "no parameter called 'wte' in this part");
}

TEST(TensorParallelLayout, ARankHoldsOneTthOfTheShardedTensorsPlusTheReplicated) {
  // Counted from the buffers a Model allocates. Per block, sharded: W_qkv 3C² + b_qkv 3C +
  // W_out C² + W_fc 4C² + b_fc 4C + W_proj 4C² = 12C² + 7C; replicated: two LayerNorms 4C,
  // b_out and b_proj 2C. Outside the blocks, replicated: (V + context)·C + 2C.
  const Config c = tiny_config();
  const std::size_t cc = c.d_model, layers = c.n_layer;
  const std::size_t sharded = layers * (12 * cc * cc + 7 * cc);
  const std::size_t replicated = layers * 6 * cc + (c.vocab_size + c.context) * cc + 2 * cc;
  ASSERT_EQ(sharded + replicated, static_cast<std::size_t>(c.parameter_count()));
  for (int t : {1, 2, 4}) {
    for (int r = 0; r < t; ++r) {
      testing::RankSeam<float> seam(r, t);
      MemoryTracker tracker;
      ModelOptions<float> options;
      options.part.tensor_parallel = {r, t};
      options.tensor_parallel = t > 1 ? &seam : nullptr;
      options.tracker = &tracker;
      const Model<float> model(c, 2, options);
      const std::size_t want = (sharded / t + replicated) * sizeof(float);
      EXPECT_EQ(tracker.current(MemoryCategory::kParameters), want) << "rank " << r << " of " << t;
      EXPECT_EQ(tracker.current(MemoryCategory::kGradients), want) << "rank " << r << " of " << t;
    }
  }
}

TEST(TensorParallelLayout, CopiesPlaceEachRanksColumnsAndRows) {
  const Config c = tiny_config();  // C = 12, 4 heads of 3: a rank of 2 holds w = 6 columns each
  const ParameterLayout whole(c);
  std::vector<float> data(whole.total());
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(i);
  const ParameterLayout rank1(c, {0, -1, {1, 2}});
  std::vector<float> part(rank1.total(), std::numeric_limits<float>::quiet_NaN());
  copy_from_whole<float>(whole, data, rank1, part);
  const TensorSlot &wq = whole.find("h0.w_qkv"), &pq = rank1.find("h0.w_qkv");
  ASSERT_EQ(pq.cols, 18u) << "its q, k and v columns: 3 × 6";
  const std::size_t row = 2;  // any row
  EXPECT_EQ(part[pq.offset + row * 18 + 0], data[wq.offset + row * 36 + 6]) << "q of head 2";
  EXPECT_EQ(part[pq.offset + row * 18 + 6], data[wq.offset + row * 36 + 12 + 6]) << "k of head 2";
  EXPECT_EQ(part[pq.offset + row * 18 + 17], data[wq.offset + row * 36 + 24 + 11]) << "v, last";
  const TensorSlot &wp = whole.find("h1.w_proj"), &pp = rank1.find("h1.w_proj");
  ASSERT_EQ(pp.rows, 24u) << "half of the 48 hidden units";
  EXPECT_EQ(part[pp.offset + 0], data[wp.offset + 24 * 12]) << "its first row is hidden unit 24";
  // Every rank's part, copied back, rebuilds the whole buffer exactly.
  for (int t : {1, 2, 4}) {
    std::vector<float> rebuilt(whole.total(), std::numeric_limits<float>::quiet_NaN());
    for (int r = 0; r < t; ++r) {
      const ParameterLayout layout(c, {0, -1, {r, t}});
      std::vector<float> shard(layout.total());
      copy_from_whole<float>(whole, data, layout, shard);
      copy_to_whole<float>(layout, shard, whole, rebuilt);
    }
    EXPECT_EQ(std::memcmp(rebuilt.data(), data.data(), data.size() * sizeof(float)), 0)
        << t << " ranks' parts do not rebuild the whole buffer";
  }
  expect_error([&] { copy_from_whole<float>(rank1, part, whole, data); },
               "the first layout must be the whole model");
  std::vector<float> short_part(3);
  expect_error([&] { copy_from_whole<float>(whole, data, rank1, short_part); },
               "buffers of " + std::to_string(whole.total()) + " and 3 elements");
}

TEST(ModelPart, InitialisesItsShareOfTheWholeModel) {
  const Config c = tiny_config();
  Model<float> whole(c, 1);
  whole.init(5);
  testing::RankSeam<float> seam(1, 2);
  ModelOptions<float> options;
  options.part = {1, 3, {1, 2}};  // the last two layers, tensor-parallel rank 1 of 2
  options.tensor_parallel = &seam;
  Model<float> part(c, 1, options);
  part.init(5);
  std::vector<float> want(part.layout().total());
  copy_from_whole<float>(whole.layout(), whole.params().span(), part.layout(), want);
  EXPECT_EQ(std::memcmp(want.data(), part.params().data(), part.params().bytes()), 0)
      << "a part's initialisation must be its share of the whole model's, bit for bit";
}

TEST(VocabularySplit, ARankHoldsItsRowsOfTheTiedEmbeddingAndItsShareOfTheInitialisation) {
  // Chapter 7's vocabulary-parallel embedding and head: wte [V, C] split by rows, V/t each.
  const Config c = tiny_config();  // V = 12
  const ParameterLayout whole(c);
  std::vector<double> data(whole.total());
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<double>(i);
  std::vector<double> whole_init(whole.total());
  init_parameters<double>(whole, 11, whole_init);
  for (int t : {2, 3, 4}) {
    if (c.n_head % t != 0) continue;
    std::vector<double> rebuilt(whole.total(), std::numeric_limits<double>::quiet_NaN());
    for (int r = 0; r < t; ++r) {
      const ParameterLayout layout(c, {0, -1, {r, t, true}});
      const TensorSlot& wte = layout.find("wte");
      EXPECT_EQ(wte.rows, static_cast<std::size_t>(c.vocab_size / t))
          << "rank " << r << " of " << t;
      EXPECT_EQ(wte.split, TensorParallelSplit::kRows);
      EXPECT_EQ(layout.part().tensor_parallel.vocab_begin(c), r * c.vocab_size / t);
      std::vector<double> shard(layout.total());
      copy_from_whole<double>(whole, data, layout, shard);
      EXPECT_EQ(shard[wte.offset],
                data[whole.find("wte").offset + r * (c.vocab_size / t) * c.d_model])
          << "rank " << r << "'s first row of wte is token " << r * c.vocab_size / t;
      copy_to_whole<double>(layout, shard, whole, rebuilt);
      std::vector<double> init(layout.total()), want(layout.total());
      init_parameters<double>(layout, 11, init);
      copy_from_whole<double>(whole, whole_init, layout, want);
      EXPECT_EQ(std::memcmp(init.data(), want.data(), init.size() * sizeof(double)), 0)
          << "rank " << r << " of " << t << ": a part's initialisation is its share of the whole's";
    }
    EXPECT_EQ(std::memcmp(rebuilt.data(), data.data(), data.size() * sizeof(double)), 0)
        << t << " ranks' vocabulary-split parts do not rebuild the whole buffer";
  }
  // A last stage without the embeddings holds its rows of the head's copy of wte.
  const ParameterLayout last(c, {2, 3, {1, 2, true}});
  EXPECT_EQ(last.find("wte").rows, static_cast<std::size_t>(c.vocab_size / 2));
  Config odd = c;
  odd.vocab_size = 10;
  expect_error(
      [&] {
        ParameterLayout(odd, {0, -1, {0, 4, true}});
      },
      {"4 tensor-parallel ranks cannot split a vocabulary of 10 tokens evenly",
       "pad the vocabulary to a multiple of 4"});
  std::vector<double> wrong(3);
  expect_error([&] { init_parameters<double>(whole, 1, wrong); },
               "a buffer of 3 elements for a layout of " + std::to_string(whole.total()));
}

TEST(ModelPart, RefusesBadPartsAndMisusedPieces) {
  const Config c = tiny_config();  // 4 heads, 3 layers
  expect_error(
      [&] {
        ParameterLayout(c, {0, -1, {0, 3}});
      },
      "3 tensor-parallel ranks cannot split 4 heads evenly");
  expect_error([&] { ParameterLayout(c, {0, -1, {2, 2}}); }, "rank 2 of 2 ranks");
  expect_error([&] { ParameterLayout(c, {2, 2}); }, "layers [2, 2) are not a non-empty range");
  expect_error([&] { ParameterLayout(c, {0, 4}); }, "inside 0..3");
  ModelOptions<float> tp;
  tp.part.tensor_parallel = {1, 2};
  expect_error([&] { Model<float>(c, 1, tp); },
               "rank 1 of 2 needs its seam in ModelOptions::tensor_parallel");
  testing::RankSeam<float> seam(0, 2);
  tp.tensor_parallel = &seam;
  expect_error([&] { Model<float>(c, 1, tp); },
               "the seam is rank 0 of 2 but the part's slice "
               "is rank 1 of 2");
  ModelOptions<float> middle_options;
  middle_options.part = {1, 2};
  Model<float> middle(c, 1, middle_options), other(c, 1);
  Activations<float> acts(middle), others(other);
  const std::vector<int> tokens(5, 1);
  expect_error([&] { middle.embed_forward(acts, tokens.data(), 1, 5); },
               "starts at layer 1 and does not hold the embeddings");
  expect_error([&] { middle.layers_forward(acts, 1, 2); }, "no micro-batch yet");
  acts.set_shape(1, 5);
  expect_error([&] { middle.head_forward(acts, tokens.data()); }, "does not hold the head");
  expect_error([&] { middle.layers_forward(acts, 0, 2); },
               "range [0, 2) is not inside this part's [1, 2)");
  expect_error([&] { middle.layers_forward(others, 1, 2); }, "made for another Model");
  expect_error([&] { middle.tied_embedding(); }, "holds neither the embedding nor the head");
  expect_error([&] { acts.residual(3); }, "layer boundary 3 is outside this part's 1..2");
  expect_error([&] { acts.logits(); }, "has no LM head");
  expect_error([&] { acts.set_shape(2, 5); }, "batch 2 is outside 1..1");
}

TEST(Block, RefusesBuffersAndGroupsOfAnotherShape) {
  const Config c = tiny_config();
  Model<double> whole(c, 2);
  const auto w = bind(whole.layout(), whole.params().data());
  std::vector<double> x(2 * 5 * c.d_model, 0.5), y(x.size());
  BlockActivations<double> acts(c, {}, 1, 5), half_acts(c, {0, 2}, 2, 5);
  BlockWorkspace<double> workspace(c, {}, 2, 5);
  BlockActivations<double> room(c, {}, 2, 5);
  expect_error(
      [&] { block_forward(c, {}, w.blocks[0], 2, 5, x.data(), y.data(), acts, workspace); },
      "2 × 5 rows do not fit the activations (1 × 5)");
  expect_error(
      [&] { block_forward(c, {}, w.blocks[0], 2, 5, x.data(), y.data(), half_acts, workspace); },
      "sized for another tensor-parallel slice");
  expect_error(
      [&] {
        block_forward(c, {1, 2}, w.blocks[0], 2, 5, x.data(), y.data(), half_acts, workspace);
      },
      "the seam is rank 0 of 1 but the slice is rank 1 of 2");
  testing::RankSeam<double> seam(1, 2);
  expect_error(
      [&] { block_forward(c, {}, w.blocks[0], 2, 5, x.data(), y.data(), room, workspace, &seam); },
      "the seam is rank 1 of 2 but the slice is rank 0 of 1");
  expect_error([&] { BlockActivations<double>(c, {}, 0, 5); }, "room for 0 × 5 rows");
}

}  // namespace
}  // namespace book::train
