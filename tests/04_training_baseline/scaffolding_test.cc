// Tests of the chapter's scaffolding (not exercises): the other layers against finite
// differences, the data, the schedule, the argument checks. They pass on both tracks.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "chapters/04_training_baseline/clipping.h"
#include "chapters/04_training_baseline/data.h"
#include "chapters/04_training_baseline/layers.h"
#include "chapters/04_training_baseline/model.h"
#include "chapters/04_training_baseline/optimizer.h"
#include "chapters/04_training_baseline/step.h"
#include "common/check.h"
#include "common/testing/expect_error.h"
#include "tests/04_training_baseline/gradcheck.h"

namespace book::train {
namespace {

using book::testing::expect_error;
using testing::expect_close;
using testing::numeric_gradient;
using testing::random_vector;
using testing::weighted_sum;

constexpr double kTol = 1e-7;  // central differences in double, h = 1e-6

TEST(Layers, LinearBackwardMatchesFiniteDifferences) {
  const int rows = 5, in = 7, out = 3, ldw = 9;  // W is a 7×3 block of a 7×9 matrix
  Rng rng(1);
  auto x = random_vector(rows * in, rng), w = random_vector(in * ldw, rng),
       b = random_vector(out, rng);
  const auto dy = random_vector(rows * out, rng);
  auto loss = [&] {
    std::vector<double> y(rows * out);
    linear_forward(x.data(), rows, in, w.data(), ldw, b.data(), out, y.data(), out);
    return weighted_sum(y, dy);
  };
  std::vector<double> dx(x.size(), 0.0), dw(w.size(), 0.0), db(out, 0.0);
  linear_backward(dy.data(), out, x.data(), rows, in, w.data(), ldw, out, dx.data(), dw.data(),
                  db.data());
  expect_close("dx", numeric_gradient(x, loss), dx, kTol);
  expect_close("dW (columns outside the block stay 0)", numeric_gradient(w, loss), dw, kTol);
  expect_close("dbias", numeric_gradient(b, loss), db, kTol);
}

TEST(Layers, GeluBackwardMatchesFiniteDifferences) {
  Rng rng(2);
  auto x = random_vector(41, rng, -4.0, 4.0);
  const auto dy = random_vector(41, rng);
  auto loss = [&] {
    std::vector<double> y(x.size());
    gelu_forward(x.data(), x.size(), y.data());
    return weighted_sum(y, dy);
  };
  std::vector<double> dx(x.size(), 0.0);
  gelu_backward(dy.data(), x.data(), x.size(), dx.data());
  expect_close("dx", numeric_gradient(x, loss), dx, kTol);
}

TEST(Layers, EmbeddingBackwardMatchesFiniteDifferences) {
  const int batch = 2, seq_len = 4, channels = 5, vocab = 6;
  Rng rng(3);
  auto wte = random_vector(vocab * channels, rng), wpe = random_vector(seq_len * channels, rng);
  const std::vector<int> tokens = {1, 3, 3, 0, 5, 1, 2, 3};  // repeats: gradients must add up
  const auto dout = random_vector(batch * seq_len * channels, rng);
  auto loss = [&] {
    std::vector<double> out(dout.size());
    embedding_forward(tokens.data(), batch, seq_len, wte.data(), wpe.data(), channels, out.data());
    return weighted_sum(out, dout);
  };
  std::vector<double> dwte(wte.size(), 0.0), dwpe(wpe.size(), 0.0);
  embedding_backward(tokens.data(), batch, seq_len, dout.data(), channels, dwte.data(),
                     dwpe.data());
  expect_close("dwte", numeric_gradient(wte, loss), dwte, kTol);
  expect_close("dwpe", numeric_gradient(wpe, loss), dwpe, kTol);
}

TEST(Layers, CrossEntropyBackwardMatchesFiniteDifferences) {
  const int rows = 6, vocab = 7;
  Rng rng(4);
  auto logits = random_vector(rows * vocab, rng, -3.0, 3.0);
  const std::vector<int> targets = {2, -1, 6, 0, -1, 3};
  std::vector<double> probs(logits.size());
  auto loss = [&] {
    return cross_entropy_forward(logits.data(), targets.data(), rows, vocab, probs.data());
  };
  const double value = loss();
  std::vector<double> dlogits(logits.size(), std::numeric_limits<double>::quiet_NaN());
  cross_entropy_backward(probs.data(), targets.data(), rows, vocab, 1.0, dlogits.data());
  expect_close("dlogits", numeric_gradient(logits, loss), dlogits, kTol);
  // The loss itself, row by row in long double.
  long double expected = 0;
  for (int i : {0, 2, 3, 5}) {
    long double sum = 0;
    for (int v = 0; v < vocab; ++v)
      sum += std::exp(static_cast<long double>(logits[i * vocab + v]));
    expected += std::log(sum) - logits[i * vocab + targets[i]];
  }
  EXPECT_NEAR(value, static_cast<double>(expected / 4), 1e-12);
}

TEST(Layers, AttentionIsCausalAndRowsAreDistributions) {
  const int batch = 1, seq_len = 6, heads = 2, hs = 3, row = 3 * heads * hs;
  Rng rng(5);
  auto qkv = random_vector(seq_len * row, rng, -2.0, 2.0);
  std::vector<double> att(heads * seq_len * seq_len), out(seq_len * heads * hs), att2(att.size()),
      out2(out.size());
  attention_forward(qkv.data(), batch, seq_len, heads, hs, att.data(), out.data());
  for (int h = 0; h < heads; ++h)
    for (int t = 0; t < seq_len; ++t) {
      double sum = 0;
      for (int s = 0; s < seq_len; ++s) {
        const double p = att[(h * seq_len + t) * seq_len + s];
        if (s > t) {
          EXPECT_EQ(p, 0.0) << "head " << h << " query " << t << " attends to the future position "
                            << s;
        }
        sum += p;
      }
      EXPECT_NEAR(sum, 1.0, 1e-12) << "head " << h << " query " << t;
    }
  for (int i = 4 * row; i < 6 * row; ++i) qkv[i] += 1.0;  // change positions 4 and 5
  attention_forward(qkv.data(), batch, seq_len, heads, hs, att2.data(), out2.data());
  for (int i = 0; i < 4 * heads * hs; ++i)
    EXPECT_EQ(out[i], out2[i]) << "output " << i << " saw the future";
}

TEST(Optimizer, ScheduleWarmsUpThenDecays) {
  EXPECT_FLOAT_EQ(learning_rate(1, 10, 100, 1e-3f, 1e-4f), 1e-4f);
  EXPECT_FLOAT_EQ(learning_rate(10, 10, 100, 1e-3f, 1e-4f), 1e-3f);
  EXPECT_NEAR(learning_rate(55, 10, 100, 1e-3f, 1e-4f), 5.5e-4f, 1e-9)
      << "half-way down the cosine";
  EXPECT_FLOAT_EQ(learning_rate(100, 10, 100, 1e-3f, 1e-4f), 1e-4f);
  EXPECT_FLOAT_EQ(learning_rate(500, 10, 100, 1e-3f, 1e-4f), 1e-4f);
  float previous = 1;
  for (int s = 10; s <= 100; ++s) {
    const float lr = learning_rate(s, 10, 100, 1e-3f, 1e-4f);
    EXPECT_LE(lr, previous) << "step " << s;
    previous = lr;
  }
  expect_error([] { learning_rate(0, 10, 100, 1e-3f, 1e-4f); }, "steps count from 1, got 0");
  expect_error([] { learning_rate(1, 200, 100, 1e-3f, 1e-4f); },
               "need 0 <= warmup_steps <= total_steps, got 200 and 100");
  expect_error([] { learning_rate(1, 10, 100, 1e-4f, 1e-3f); },
               "need 0 <= min_lr <= max_lr <= 1, got 0.001 and 0.0001");
}

TEST(Optimizer, ClipsByGlobalNorm) {
  std::vector<float> g = {3.0f, 4.0f, 0.0f, 12.0f};  // norm 13
  EXPECT_DOUBLE_EQ(clip_global_norm(g, 26.0), 13.0);
  EXPECT_EQ(g[3], 12.0f) << "below the limit nothing changes";
  EXPECT_DOUBLE_EQ(clip_global_norm(g, 1.3), 13.0);
  EXPECT_NEAR(global_norm(g), 1.3, 1e-6);
  EXPECT_NEAR(g[0], 0.3f, 1e-6) << "every gradient scaled by the same factor";
  expect_error([&] { clip_global_norm(g, 0.0); }, "max_norm must be positive, got 0");
}

TEST(Data, EncodesAdditionWithTheSumReversed) {
  const AdditionTask task(3);
  EXPECT_EQ(AdditionTask::to_text(task.encode(123, 456)), "123+456=9750");
  EXPECT_EQ(AdditionTask::to_text(task.encode(999, 1)), "999+001=0001");
  const auto seq = task.encode(987, 654);
  EXPECT_EQ(AdditionTask::decode_answer(seq.data() + task.prompt_length(), task.answer_length()),
            1641);
  expect_error([&] { task.encode(1000, 1); }, "operands must be in 0..999, got 1000 and 1");
  expect_error([] { AdditionTask(0); }, "digits must be 1..6, got 0");
}

TEST(Data, SplitsAreDisjointAndBatchesGradeOnlyTheAnswer) {
  const AdditionTask task(2);
  int validation = 0;
  for (int a = 0; a < 100; ++a)
    for (int b = 0; b < 100; ++b) validation += task.is_validation(a, b);
  EXPECT_GT(validation, 800);
  EXPECT_LT(validation, 1200) << "about 10% of the 10000 pairs";
  Rng rng(8);
  for (int i = 0; i < 500; ++i) {
    auto [a, b] = task.sample(rng, Split::kTrain);
    ASSERT_FALSE(task.is_validation(a, b)) << a << "+" << b << " drawn for training but held out";
  }
  const Batch batch = task.batch(rng, Split::kValidation, 3);
  ASSERT_EQ(batch.tokens.size(), 3u * task.model_context());
  for (int i = 0; i < 3; ++i)
    for (int t = 0; t < task.model_context(); ++t) {
      const int target = batch.targets[i * task.model_context() + t];
      if (t + 1 < task.prompt_length())
        EXPECT_EQ(target, -1) << "prompt position " << t << " is graded";
      else
        EXPECT_GE(target, 0) << "answer position " << t << " is not graded";
    }
}

TEST(Config, CountsParametersAndFlops) {
  Config c;  // 2 layers, d_model 64, 4 heads, vocab 12, context 11
  const ParameterLayout layout(c);
  EXPECT_EQ(static_cast<std::int64_t>(layout.total()), c.parameter_count());
  // 12·C² + 13·C per block, plus (V + context)·C embeddings and 2·C for the final LayerNorm.
  EXPECT_EQ(c.parameter_count(), 2 * (12 * 64 * 64 + 13 * 64) + (12 + 11) * 64 + 2 * 64);
  EXPECT_DOUBLE_EQ(c.training_flops_per_token(11),
                   6.0 * (2 * 12 * 64 * 64 + 12 * 64) + 12.0 * 2 * 64 * 11);
  Config bad = c;
  bad.d_model = 66;  // not a multiple of 4 heads
  expect_error([&] { bad.validate(); }, "d_model (66) must be a positive multiple of n_head (4)");
  bad = c;
  bad.n_layer = 0;
  expect_error([&] { ParameterLayout{bad}; }, "n_layer must be >= 1, got 0");
  expect_error([&] { layout.find("h9.w_qkv"); }, "no parameter called 'h9.w_qkv'");
  const auto [begin, end] = layout.layer_range(1);
  EXPECT_EQ(end - begin, static_cast<std::size_t>(12 * 64 * 64 + 13 * 64))
      << "a layer is one contiguous range";
}

TEST(Model, RejectsBadInputs) {
  Config c;
  Model<float> model(c, 2);
  model.init(1);
  std::vector<int> tokens(2 * 11, 3), targets(2 * 11, -1);
  tokens[5] = 12;
  expect_error([&] { model.forward(tokens.data(), targets.data(), 2, 11); },
               "token 12 at position 5 is outside the vocabulary 0..11");
  tokens[5] = 3;
  expect_error([&] { model.forward(tokens.data(), targets.data(), 3, 11); },
               "batch 3 is outside 1..2 (the max_batch it was built for)");
  expect_error([&] { model.forward(tokens.data(), targets.data(), 1, 12); },
               "seq_len 12 is outside 1..11 (the context)");
  targets[0] = 40;
  expect_error([&] { model.forward(tokens.data(), targets.data(), 2, 11); },
               "target 40 at row 0 is neither -1 nor a token id");
  expect_error([&] { Model<float>(c, 0); }, "max_batch must be >= 1, got 0");
  model.forward(tokens.data(), nullptr, 2, 11);  // logits only
  expect_error([&] { model.backward(); }, "the last forward had no targets");
  Batch batch;
  batch.batch = 2, batch.seq_len = 11, batch.tokens = tokens, batch.targets.resize(5);
  expect_error([&] { forward_backward(model, batch, 1.0f); },
               "a batch of 2 × 11 has 22 tokens and 5 targets");
}

}  // namespace
}  // namespace book::train
