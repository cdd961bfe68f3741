// Graded tests of the whole model and training loop (the pipeline pieces are in
// pipeline_test.cc). They exercise every layer, so they need
// train.layernorm_backward and train.attention_backward (recorded under the latter), or the
// optimizer (recorded under train.adamw_step); against a stub they skip.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "chapters/04_training_baseline/model.h"
#include "chapters/04_training_baseline/trainer.h"
#include "common/testing/exercise.h"
#include "tests/04_training_baseline/gradcheck.h"

namespace book::train {
namespace {

using testing::expect_close;
using testing::random_vector;

Config tiny_config() {
  Config c;
  c.vocab_size = 12;
  c.context = 5;
  c.n_layer = 2;
  c.n_head = 2;
  c.d_model = 6;
  return c;
}

struct TinyBatch {
  int batch = 2, seq_len = 5;
  std::vector<int> tokens, targets;
  explicit TinyBatch(std::uint64_t seed) {
    Rng rng(seed);
    for (int i = 0; i < batch * seq_len; ++i) {
      tokens.push_back(static_cast<int>(rng.uniform_int(0, 11)));
      targets.push_back(i % 3 == 0 ? -1
                                   : static_cast<int>(rng.uniform_int(0, 11)));  // some ignored
    }
  }
};

// Random parameters of a larger scale than GPT-2's init so every path carries signal.
template <typename T>
void randomise(Model<T>& model, std::uint64_t seed) {
  Rng rng(seed);
  for (auto& p : model.params()) p = static_cast<T>(rng.uniform(-0.5, 0.5));
  for (const auto& slot : model.layout().slots())
    if (slot.name.find("gain") != std::string::npos)
      for (std::size_t i = 0; i < slot.size(); ++i) model.params()[slot.offset + i] += T(1);
}

EXERCISE_TEST("train.attention_backward", WholeModel, GradientMatchesFiniteDifferences) {
  const Config config = tiny_config();
  Model<double> model(config, 2);
  randomise(model, 90);
  const TinyBatch b(91);
  model.zero_grad();
  model.forward(b.tokens.data(), b.targets.data(), b.batch, b.seq_len);
  model.backward();
  const std::vector<double> analytic(model.grads().begin(), model.grads().end());
  std::vector<double> params(model.params().begin(), model.params().end());
  const auto numeric = testing::numeric_gradient(params, [&] {
    std::copy(params.begin(), params.end(), model.params().begin());
    return model.forward(b.tokens.data(), b.targets.data(), b.batch, b.seq_len);
  });
  for (const auto& slot : model.layout().slots()) {
    const std::vector<double> want(numeric.begin() + slot.offset,
                                   numeric.begin() + slot.offset + slot.size());
    const std::vector<double> got(analytic.begin() + slot.offset,
                                  analytic.begin() + slot.offset + slot.size());
    expect_close("gradient of " + slot.name, want, got, 1e-7);
  }
}

EXERCISE_TEST("train.attention_backward", WholeModel, FloatGradientMatchesDouble) {
  Config config = tiny_config();
  config.d_model = 16;
  config.n_head = 4;
  Model<double> md(config, 2);
  Model<float> mf(config, 2);
  randomise(md, 92);
  std::copy(md.params().begin(), md.params().end(), mf.params().begin());
  const TinyBatch b(93);
  md.zero_grad();
  mf.zero_grad();
  const double ld = md.forward(b.tokens.data(), b.targets.data(), b.batch, b.seq_len);
  const float lf = mf.forward(b.tokens.data(), b.targets.data(), b.batch, b.seq_len);
  EXPECT_NEAR(lf, ld, 1e-5 * std::max(1.0, ld));
  md.backward();
  mf.backward();
  expect_close("float model gradient vs double", {md.grads().begin(), md.grads().end()},
               {mf.grads().begin(), mf.grads().end()}, 1e-4);
}

TrainOptions tiny_training(DType precision = DType::kF32) {
  TrainOptions o;
  o.digits = 2;
  o.model.n_layer = 2;
  o.model.n_head = 2;
  o.model.d_model = 16;
  o.micro_batch = 8;
  o.accumulation = 2;
  o.total_steps = 40;
  o.warmup_steps = 4;
  o.precision = precision;
  o.scaler.growth_interval = 2;  // so the scaler's state changes within the test
  return o;
}

std::vector<float> losses(Trainer& trainer, int steps) {
  std::vector<float> out;
  for (int i = 0; i < steps; ++i) out.push_back(trainer.step().loss);
  return out;
}

void expect_bit_identical(const std::vector<float>& a, const std::vector<float>& b,
                          const std::string& what) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i)
    EXPECT_EQ(std::memcmp(&a[i], &b[i], sizeof(float)), 0)
        << what << ": step " << i + 1 << " loss " << a[i] << " vs " << b[i]
        << " (must be bit-identical)";
}

EXERCISE_TEST("train.adamw_step", Determinism, SameSeedSameLossesBitForBit) {
  for (DType p : {DType::kF32, DType::kBF16, DType::kF16}) {
    Trainer a(tiny_training(p)), b(tiny_training(p));
    expect_bit_identical(losses(a, 6), losses(b, 6), dtype_name(p));
    TrainOptions other = tiny_training(p);
    other.seed += 1;
    Trainer c(other);
    EXPECT_NE(losses(c, 1)[0], Trainer(tiny_training(p)).step().loss)
        << "another seed must give another run";
  }
}

EXERCISE_TEST("train.adamw_step", Checkpoint, ResumedRunIsBitIdentical) {
  for (DType p : {DType::kF32, DType::kF16}) {
    SCOPED_TRACE(dtype_name(p));
    Trainer straight(tiny_training(p));
    const auto expected = losses(straight, 8);
    Trainer first_half(tiny_training(p));
    losses(first_half, 3);
    const std::string path = ::testing::TempDir() + "/ch04_resume_" + dtype_name(p) + ".ckpt";
    first_half.save(path);
    TrainOptions resumed_options = tiny_training(p);
    resumed_options.seed = 555;  // a different seed: everything must come from the checkpoint
    Trainer resumed(resumed_options);
    resumed.load(path);
    EXPECT_EQ(resumed.steps_done(), 3);
    auto tail = losses(resumed, 5);
    expect_bit_identical(std::vector<float>(expected.begin() + 3, expected.end()), tail, "resumed");
    EXPECT_EQ(resumed.scaler().scale(), straight.scaler().scale());
    EXPECT_EQ(std::memcmp(resumed.model().params().data(), straight.model().params().data(),
                          straight.model().params().size() * sizeof(float)),
              0)
        << "weights after the resumed run differ from the uninterrupted run's";
    std::remove(path.c_str());
  }
}

EXERCISE_TEST("train.adamw_step", GradientAccumulation, TwoHalvesEqualOneWholeBatch) {
  // 2 micro-batches of 4 draw the same 8 problems as 1 batch of 8; the mean of the two means is
  // the mean over 8 (each sequence grades the same number of answer tokens).
  TrainOptions whole = tiny_training(), halves = tiny_training();
  whole.micro_batch = 8, whole.accumulation = 1;
  halves.micro_batch = 4, halves.accumulation = 2;
  whole.clip_norm = halves.clip_norm = 1e9f;  // no clipping, so the raw gradients are compared
  Trainer a(whole), b(halves);
  const StepResult ra = a.step(), rb = b.step();
  EXPECT_NEAR(ra.loss, rb.loss, 1e-5);
  EXPECT_NEAR(ra.grad_norm, rb.grad_norm, 1e-5 * ra.grad_norm);
  double max_abs = 0;
  for (float g : a.model().grads()) max_abs = std::max(max_abs, std::fabs(static_cast<double>(g)));
  expect_close("accumulated gradient", {a.model().grads().begin(), a.model().grads().end()},
               {b.model().grads().begin(), b.model().grads().end()}, 1e-5 * max_abs);
}

EXERCISE_TEST("train.loss_scaler", MixedPrecision, Fp16OverflowSkipsTheStepAndHalvesTheScale) {
  TrainOptions options = tiny_training(DType::kF16);
  options.scaler.initial_scale = options.scaler.max_scale =
      16777216.0f;  // 2^24: gradients overflow
  Trainer trainer(options);
  const std::vector<float> before(trainer.model().params().begin(), trainer.model().params().end());
  const StepResult r = trainer.step();
  ASSERT_TRUE(r.skipped) << "gradients times 2^24 exceed 65504 and must be caught";
  EXPECT_EQ(trainer.scaler().scale(), 8388608.0f);
  EXPECT_EQ(
      std::memcmp(before.data(), trainer.model().params().data(), before.size() * sizeof(float)), 0)
      << "a skipped step must leave the weights untouched";
  int applied = 0;
  for (int i = 0; i < 30 && applied == 0; ++i) applied += !trainer.step().skipped;
  EXPECT_EQ(applied, 1) << "after enough halvings a step must go through (scale now "
                        << trainer.scaler().scale() << ")";
}

// The seam chapter 6's ZeRO-3 uses: a model that owns no parameters, pointed range by range at
// buffers the caller owns (one per layer, re-pointed between passes), computes what a model
// with its own buffers computes, bit for bit: same loss, same gradients.
EXERCISE_TEST("train.attention_backward", WholeModel, ReboundToCallerBuffersMatchesBitForBit) {
  const Config config = tiny_config();
  Model<float> owner(config, 2);
  owner.init(7);
  ModelOptions<float> options;
  options.own_parameters = false;
  Model<float> borrower(config, 2, options);
  EXPECT_EQ(borrower.params().size(), 0u);
  EXPECT_EQ(borrower.grads().size(), 0u);
  const ParameterLayout& layout = owner.layout();
  std::vector<std::pair<std::size_t, std::size_t>> ranges = {layout.embedding_range()};
  for (int l = 0; l < config.n_layer; ++l) ranges.push_back(layout.layer_range(l));
  ranges.push_back(layout.head_range());
  // A first set of buffers holding garbage, then the real copies: re-pointing must take.
  std::vector<std::vector<float>> junk, params, grads;
  for (const auto& [begin, end] : ranges) {
    junk.emplace_back(end - begin, 3.0f);
    params.emplace_back(owner.params().begin() + begin, owner.params().begin() + end);
    grads.emplace_back(end - begin, 0.0f);
  }
  for (std::size_t i = 0; i < ranges.size(); ++i)
    borrower.bind_range(ranges[i].first, ranges[i].second, junk[i].data(), junk[i].data());
  for (std::size_t i = 0; i < ranges.size(); ++i)
    borrower.bind_range(ranges[i].first, ranges[i].second, params[i].data(), grads[i].data());
  const TinyBatch b(5);
  const float expected = owner.forward(b.tokens.data(), b.targets.data(), b.batch, b.seq_len);
  const float got = borrower.forward(b.tokens.data(), b.targets.data(), b.batch, b.seq_len);
  EXPECT_EQ(std::memcmp(&expected, &got, sizeof(float)), 0) << expected << " vs " << got;
  owner.backward();
  borrower.backward();
  for (std::size_t i = 0; i < ranges.size(); ++i)
    for (std::size_t k = 0; k < grads[i].size(); ++k)
      ASSERT_EQ(std::memcmp(&grads[i][k], &owner.grads()[ranges[i].first + k], sizeof(float)), 0)
          << "gradient element " << ranges[i].first + k;
  EXPECT_THROW(borrower.bind_range(0, layout.total(), nullptr, grads[0].data()), Error);
  const TensorSlot& wpe = layout.find("wpe");
  EXPECT_THROW(borrower.bind_range(wpe.offset + 1, ranges[0].second, params[0].data(),
                                   grads[0].data()),
               Error);  // cuts wpe
}

}  // namespace
}  // namespace book::train
