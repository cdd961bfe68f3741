// Graded tests of the whole model and training loop. They exercise every layer, so they need
// train.layernorm_backward and train.attention_backward (recorded under the latter), or the
// optimizer (recorded under train.adamw_step); against a stub they skip.
#include <barrier>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "chapters/04_training_baseline/block.h"
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

// Two tensor-parallel ranks as two threads: the reduce callback is a real all-reduce between
// them (each deposits its partial sum, both add the two, then both overwrite their own).
class TwoRankAllReduce {
 public:
  AllReduce<double> for_rank(int rank) {
    return [this, rank](double* data, std::size_t count) {
      parts_[rank] = data;
      sync_.arrive_and_wait();
      std::vector<double> sum(count);
      for (std::size_t i = 0; i < count; ++i) sum[i] = parts_[0][i] + parts_[1][i];
      sync_.arrive_and_wait();  // both have read both parts before either overwrites its own
      std::copy(sum.begin(), sum.end(), data);
    };
  }

 private:
  std::barrier<> sync_{2};
  double* parts_[2] = {nullptr, nullptr};
};

EXERCISE_TEST("train.attention_backward", TensorParallel, TwoShardsReproduceTheWholeBlock) {
  // Heads {0} | {1, 2} and hidden units [0, 40) | [40, 48) (uneven on purpose): with the
  // all-reduce, each rank's output and input gradient equal the unsharded block's, each rank's
  // weight gradients equal the full gradient on its own slice and stay zero elsewhere.
  Config config = tiny_config();
  config.d_model = 12;
  config.n_head = 3;
  const int batch = 2, seq_len = 5, n = batch * seq_len, c = config.d_model;
  Model<double> model(config, batch);
  randomise(model, 94);
  const auto w = bind(model.layout(), config.n_layer, model.params().data());
  Rng rng(95);
  const auto x = random_vector(n * c, rng), dy = random_vector(n * c, rng);

  struct Result {
    std::vector<double> grads, y, dx;
  };
  auto run = [&](const Shard& shard, const AllReduce<double>& reduce, Result& out) {
    out.grads.assign(model.layout().total(), 0.0);
    const auto g = bind(model.layout(), config.n_layer, out.grads.data());
    BlockActivations<double> acts;
    acts.resize(config, shard, batch, seq_len);
    out.y.assign(n * c, std::numeric_limits<double>::quiet_NaN());  // poisoned
    out.dx.assign(n * c, std::numeric_limits<double>::quiet_NaN());
    block_forward(config, w.blocks[0], shard, batch, seq_len, x.data(), out.y.data(), acts, reduce);
    block_backward(config, w.blocks[0], g.blocks[0], shard, batch, seq_len, x.data(), dy.data(),
                   out.dx.data(), acts, reduce);
  };
  Result full, rank[2];
  run(Shard{}, {}, full);
  const Shard shards[2] = {Shard{0, 1, 0, 40}, Shard{1, 3, 40, 48}};
  TwoRankAllReduce group;
  std::thread other([&] { run(shards[1], group.for_rank(1), rank[1]); });
  run(shards[0], group.for_rank(0), rank[0]);
  other.join();

  const int hs = config.head_size();
  for (int r = 0; r < 2; ++r) {
    SCOPED_TRACE("rank " + std::to_string(r));
    expect_close("block output", full.y, rank[r].y, 1e-12);
    expect_close("input gradient", full.dx, rank[r].dx, 1e-12);
    const Shard& s = shards[r];
    // Which elements of each tensor this rank owns (row, column) → expected = full or 0.
    auto owned = [&](const std::string& name, std::size_t row, std::size_t col) {
      const std::string t = name.substr(name.find('.') + 1);
      const int head_col = static_cast<int>(col % c) / hs, head_row = static_cast<int>(row) / hs;
      if (t == "w_qkv" || t == "b_qkv") return s.head_begin <= head_col && head_col < s.head_end;
      if (t == "w_out") return s.head_begin <= head_row && head_row < s.head_end;
      if (t == "b_out") return s.head_begin == 0;
      if (t == "w_fc" || t == "b_fc")
        return s.hidden_begin <= static_cast<int>(col) && static_cast<int>(col) < s.hidden_end;
      if (t == "w_proj")
        return s.hidden_begin <= static_cast<int>(row) && static_cast<int>(row) < s.hidden_end;
      if (t == "b_proj") return s.hidden_begin == 0;
      return true;  // LayerNorm gains and biases: replicated
    };
    for (const auto& slot : model.layout().slots()) {
      if (slot.name.rfind("h0.", 0) != 0) continue;
      std::vector<double> want, got;
      for (std::size_t i = 0; i < slot.rows; ++i)
        for (std::size_t j = 0; j < slot.cols; ++j) {
          want.push_back(owned(slot.name, i, j) ? full.grads[slot.offset + i * slot.cols + j]
                                                : 0.0);
          got.push_back(rank[r].grads[slot.offset + i * slot.cols + j]);
        }
      expect_close("gradient of " + slot.name, want, got, 1e-12);
    }
  }
}

EXERCISE_TEST("train.attention_backward", PipelineParallel, TwoStagesReproduceTheWholeModel) {
  // Stage 0 runs the embedding and layer 0, stage 1 layer 1 and the head; activations and
  // their gradients cross between them as plain arrays, as they would over a network.
  const Config config = tiny_config();
  const TinyBatch b(96);
  Model<double> whole(config, 2), stage0(config, 2), stage1(config, 2);
  randomise(whole, 97);
  std::copy(whole.params().begin(), whole.params().end(), stage0.params().begin());
  std::copy(whole.params().begin(), whole.params().end(), stage1.params().begin());
  for (auto* m : {&whole, &stage0, &stage1}) m->zero_grad();
  const double loss = whole.forward(b.tokens.data(), b.targets.data(), b.batch, b.seq_len);
  whole.backward();

  const std::size_t nc = static_cast<std::size_t>(b.batch) * b.seq_len * config.d_model;
  stage0.embed_forward(b.tokens.data(), b.batch, b.seq_len);
  stage0.layers_forward(0, 1);
  stage1.set_shape(b.batch, b.seq_len);
  std::copy(stage0.residual(1), stage0.residual(1) + nc, stage1.residual(1));  // "send"
  stage1.layers_forward(1, 2);
  EXPECT_EQ(stage1.head_forward(b.targets.data()), loss)
      << "the pipeline's loss must be bit-identical";
  stage1.head_backward(1.0);
  stage1.layers_backward(2, 1);
  std::copy(stage1.residual_grad(1), stage1.residual_grad(1) + nc,
            stage0.residual_grad(1));  // "send back"
  stage0.layers_backward(1, 0);
  stage0.embed_backward();
  std::vector<double> summed(whole.layout().total());
  for (std::size_t i = 0; i < summed.size(); ++i) summed[i] = stage0.grads()[i] + stage1.grads()[i];
  expect_close("stage0 + stage1 gradients", {whole.grads().begin(), whole.grads().end()}, summed,
               1e-12);
  const auto [l1_begin, l1_end] = whole.layout().layer_range(1);
  for (std::size_t i = l1_begin; i < l1_end; ++i)
    ASSERT_EQ(stage0.grads()[i], 0.0)
        << "stage 0 must not touch layer 1's gradient (element " << i << ")";
}

TrainOptions tiny_training(Precision precision = Precision::kFP32) {
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
  for (Precision p : {Precision::kFP32, Precision::kBF16, Precision::kFP16}) {
    Trainer a(tiny_training(p)), b(tiny_training(p));
    expect_bit_identical(losses(a, 6), losses(b, 6), precision_name(p));
    TrainOptions other = tiny_training(p);
    other.seed += 1;
    Trainer c(other);
    EXPECT_NE(losses(c, 1)[0], Trainer(tiny_training(p)).step().loss)
        << "another seed must give another run";
  }
}

EXERCISE_TEST("train.adamw_step", Checkpoint, ResumedRunIsBitIdentical) {
  for (Precision p : {Precision::kFP32, Precision::kFP16}) {
    SCOPED_TRACE(precision_name(p));
    Trainer straight(tiny_training(p));
    const auto expected = losses(straight, 8);
    Trainer first_half(tiny_training(p));
    losses(first_half, 3);
    const std::string path = ::testing::TempDir() + "/ch04_resume_" + precision_name(p) + ".ckpt";
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
  TrainOptions options = tiny_training(Precision::kFP16);
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

}  // namespace
}  // namespace book::train
