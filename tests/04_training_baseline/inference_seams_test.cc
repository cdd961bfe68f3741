// Tests of the seams an inference engine uses (chapter 10): a block run on new rows whose
// attention reads keys and values held outside the block, and the model half of a checkpoint.
// Neither calls an exercise, so they pass on both tracks.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "chapters/04_training_baseline/block.h"
#include "chapters/04_training_baseline/layers.h"
#include "chapters/04_training_baseline/model.h"
#include "chapters/04_training_baseline/parameters.h"
#include "chapters/04_training_baseline/trainer.h"
#include "common/rng.h"
#include "common/testing/expect_error.h"
#include "tests/04_training_baseline/tiny_model.h"

namespace book::train {
namespace {

using book::testing::expect_error;

// Causal attention of one query row against `keys_and_values` rows of a qkv buffer (the row's
// own key and value included): what a KV cache holds for the sequence so far.
void attend_one_row(const double* query_row, const std::vector<const double*>& kv_rows, int n_head,
                    int head_size, double* out) {
  const int width = n_head * head_size;
  for (int h = 0; h < n_head; ++h) {
    std::vector<double> scores;
    double max_score = -std::numeric_limits<double>::infinity();
    for (const double* row : kv_rows) {
      double dot = 0;
      for (int d = 0; d < head_size; ++d)
        dot += query_row[h * head_size + d] * row[width + h * head_size + d];
      scores.push_back(dot / std::sqrt(double(head_size)));
      max_score = std::max(max_score, scores.back());
    }
    double sum = 0;
    for (double& s : scores) sum += (s = std::exp(s - max_score));
    for (int d = 0; d < head_size; ++d) {
      double o = 0;
      for (std::size_t s = 0; s < kv_rows.size(); ++s)
        o += scores[s] / sum * kv_rows[s][2 * width + h * head_size + d];
      out[h * head_size + d] = o;
    }
  }
}

// The last position of a sequence, run alone through block_forward_rows with its attention
// reading the earlier positions' keys and values from outside (as a KV cache would hold them),
// gives block_forward's last row over the whole sequence.
TEST(BlockForwardRows, OneNewRowWithExternalKeysAndValuesMatchesTheWholeSequence) {
  const Config config = testing::tiny_config();
  Model<double> model(config, 1);
  testing::randomise(model, 11);
  // Kept by value: a reference into bind()'s temporary would dangle (ASan caught it).
  const BlockTensors<double> w = bind(model.layout(), model.params().data()).blocks[1];
  const int seq_len = config.context, c = config.d_model, hs = config.head_size();
  Rng rng(12);
  std::vector<double> x(static_cast<std::size_t>(seq_len) * c), y(x.size());
  for (auto& v : x) v = rng.uniform(-1, 1);

  BlockActivations<double> whole_acts(config, {}, 1, seq_len);
  BlockWorkspace<double> ws(config, {}, 1, seq_len);
  block_forward(config, {}, w, 1, seq_len, x.data(), y.data(), whole_acts, ws);
  // The earlier positions' k and v, as the whole-sequence pass computed them.
  std::vector<double> earlier(whole_acts.qkv.data(),
                              whole_acts.qkv.data() + static_cast<std::size_t>(seq_len) * 3 * c);

  BlockActivations<double> row_acts(config, {}, 1, 1, nullptr, /*attention_probabilities=*/false);
  BlockWorkspace<double> row_ws(config, {}, 1, 1);
  std::vector<double> y_row(c, std::numeric_limits<double>::quiet_NaN());
  const AttentionCore<double> cached = [&](const double* qkv, double* att_out) {
    std::vector<const double*> rows;
    for (int s = 0; s + 1 < seq_len; ++s) rows.push_back(earlier.data() + s * 3 * c);
    rows.push_back(qkv);  // the new row's own key and value
    attend_one_row(qkv, rows, config.n_head, hs, att_out);
  };
  const double* last_x = x.data() + static_cast<std::size_t>(seq_len - 1) * c;
  block_forward_rows(config, {}, w, 1, last_x, y_row.data(), row_acts, row_ws, cached);
  for (int i = 0; i < c; ++i)
    EXPECT_NEAR(y_row[i], y[static_cast<std::size_t>(seq_len - 1) * c + i], 1e-12)
        << "channel " << i << " of the last position (tolerance 1e-12: same math in double)";
  EXPECT_EQ(row_acts.att.size(), 0u) << "no attention probabilities were allocated";
}

TEST(BlockForwardRows, RefusesRowsThatDoNotFitAndTrainingWithoutProbabilities) {
  const Config config = testing::tiny_config();
  Model<float> model(config, 1);
  testing::randomise(model, 3);
  // Kept by value: a reference into bind()'s temporary would dangle (ASan caught it).
  const BlockTensors<float> w = bind(model.layout(), model.params().data()).blocks[0];
  BlockActivations<float> acts(config, {}, 1, 2, nullptr, false);
  BlockWorkspace<float> ws(config, {}, 1, 2);
  std::vector<float> x(3 * config.d_model, 0.5f), y(x.size());
  const AttentionCore<float> none = [](const float*, float*) {};
  expect_error([&] { block_forward_rows(config, {}, w, 3, x.data(), y.data(), acts, ws, none); },
               "block_forward_rows: 3 rows do not fit the activations (2 rows)");
  expect_error([&] { block_forward(config, {}, w, 1, 2, x.data(), y.data(), acts, ws); },
               "block_forward: these activations were made without attention probabilities");
}

TEST(ReadModelWeights, GivesTheSavedConfigAndWeights) {
  TrainOptions options;
  options.digits = 1;
  options.model.d_model = 16;
  options.model.n_head = 2;
  options.micro_batch = 2;
  Trainer trainer(options);
  const std::string path = ::testing::TempDir() + "/ch04_model_weights.ckpt";
  trainer.save(path);
  const ModelWeights read = read_model_weights(path);
  std::remove(path.c_str());
  EXPECT_EQ(read.config.d_model, 16);
  EXPECT_EQ(read.config.context, trainer.options().model.context);
  EXPECT_EQ(read.precision, DType::kF32);
  EXPECT_EQ(read.step, 0);
  ASSERT_EQ(read.weights.size(), trainer.model().layout().total());
  for (std::size_t i = 0; i < read.weights.size(); ++i)
    ASSERT_EQ(read.weights[i], trainer.model().params()[i]) << "weight " << i;
  expect_error([&] { read_model_weights(path); }, "cannot open checkpoint");
}

}  // namespace
}  // namespace book::train
