// Chapter 4's memory seams (memory_seams.h) with chapter 4's own pieces behind them: every
// recomputation mode, an attention kernel that is chapter 4's attention, and an optimizer that is
// chapter 4's AdamW (holding its master weights itself) train exactly as the defaults do, while
// the activations' bytes drop by what each mode stops keeping.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>

#include "chapters/04_training_baseline/adamw_state.h"
#include "chapters/04_training_baseline/layers.h"
#include "chapters/04_training_baseline/memory_seams.h"
#include "chapters/04_training_baseline/model.h"
#include "chapters/04_training_baseline/step.h"
#include "chapters/04_training_baseline/trainer.h"
#include "common/rng.h"
#include "common/testing/expect_error.h"

namespace book::train {
namespace {

// Chapter 4's attention behind the seam, counting its calls.
class MaterialisingKernel final : public AttentionKernel<double> {
 public:
  std::size_t saved_elements(int batch, int seq_len, int heads) const override {
    return static_cast<std::size_t>(batch) * heads * seq_len * seq_len;
  }
  void forward(const double* qkv, int batch, int seq_len, int heads, int head_size, double* saved,
               double* out) const override {
    ++forwards;
    attention_forward(qkv, batch, seq_len, heads, head_size, saved, out);
  }
  void backward(const double* dout, const double* qkv, const double*, const double* saved,
                int batch, int seq_len, int heads, int head_size, double* dqkv) const override {
    ++backwards;
    attention_backward(dout, qkv, saved, batch, seq_len, heads, head_size, dqkv);
  }
  mutable int forwards = 0, backwards = 0;
};

Config tiny() {
  Config c;
  c.n_layer = 3;
  c.n_head = 2;
  c.d_model = 8;
  c.vocab_size = 11;
  c.context = 7;
  return c;
}

Batch random_batch(int batch, int seq_len, std::uint64_t seed) {
  Batch b;
  b.batch = batch;
  b.seq_len = seq_len;
  Rng rng(seed);
  for (int i = 0; i < batch * seq_len; ++i) {
    b.tokens.push_back(static_cast<int>(rng.next_u64() % 11));
    b.targets.push_back(static_cast<int>(rng.next_u64() % 12) - 1);  // -1: ignored
  }
  return b;
}

// Loss and gradients of one forward/backward with `options`, and the activations' bytes.
struct SeamRun {
  double loss;
  std::vector<double> grads;
  std::size_t activation_bytes;
};
SeamRun run_once(const ModelOptions<double>& options) {
  MemoryTracker tracker;
  ModelOptions<double> o = options;
  o.tracker = &tracker;
  Model<double> model(tiny(), 3, o);
  model.init(21);
  SeamRun r;
  r.loss = forward_backward(model, random_batch(3, 6, 4), 1.0);
  r.grads.assign(model.grads().begin(), model.grads().end());
  r.activation_bytes = model.activations().bytes();
  EXPECT_EQ(r.activation_bytes, tracker.current(MemoryCategory::kActivations));
  return r;
}

TEST(MemorySeams, RecomputationAndKernelKeepGradientsBitForBit) {
  const SeamRun plain = run_once({});
  const Config c = tiny();
  const std::size_t rows = 3 * 7, probs = rows * c.n_head * c.context * sizeof(double);
  const std::size_t block = BlockActivations<double>(c, {}, 3, 7).bytes();
  for (Recomputation mode :
       {Recomputation::kNone, Recomputation::kSelective, Recomputation::kFull}) {
    MaterialisingKernel kernel;
    for (const AttentionKernel<double>* k :
         {static_cast<const AttentionKernel<double>*>(nullptr),
          static_cast<const AttentionKernel<double>*>(&kernel)}) {
      ModelOptions<double> o;
      o.recompute = mode;
      o.attention = k;
      const SeamRun r = run_once(o);
      EXPECT_EQ(std::memcmp(&r.loss, &plain.loss, sizeof(double)), 0)
          << recomputation_name(mode) << (k ? ", kernel" : "");
      ASSERT_EQ(r.grads.size(), plain.grads.size());
      EXPECT_EQ(std::memcmp(r.grads.data(), plain.grads.data(), r.grads.size() * sizeof(double)), 0)
          << recomputation_name(mode) << (k ? ", kernel" : "") << ": gradients differ";
      // Selective keeps one block's probabilities instead of three; full one block instead of
      // three (its probabilities included).
      const std::size_t dropped = mode == Recomputation::kNone        ? 0
                                  : mode == Recomputation::kSelective ? 2 * probs
                                                                      : 2 * block;
      EXPECT_EQ(r.activation_bytes, plain.activation_bytes - dropped) << recomputation_name(mode);
    }
    // The kernel ran once per block forward, again per block under recomputation, and backward.
    const int per_forward = 3;
    EXPECT_EQ(kernel.forwards, per_forward * (mode == Recomputation::kNone ? 1 : 2));
    EXPECT_EQ(kernel.backwards, 3);
  }
}

TEST(MemorySeams, FullRecomputationKeepsNoBlockToSplit) {
  ModelOptions<double> o;
  o.recompute = Recomputation::kFull;
  Model<double> model(tiny(), 2, o);
  testing::expect_error([&] { model.activations().block(1); },
                        {"full recomputation", "Recomputation::kNone"});
}

// Chapter 4's AdamW behind the optimizer seam, holding the master weights itself.
class OwnAdamW final : public TrainerOptimizer {
 public:
  OwnAdamW(const ParameterLayout& layout, MemoryTracker* tracker)
      : layout_(layout),
        master_(layout.total(), MemoryCategory::kMasterWeights, tracker),
        state_(0, layout.total(), tracker) {}
  void update(std::span<float> master, std::span<const float> grads, float lr,
              const AdamWConfig& config) override {
    EXPECT_EQ(master.data(), master_.data());  // the trainer updates the weights held here
    adamw_update(layout_, state_, master, grads, lr, config);
  }
  std::span<float> master_weights() override { return master_.span(); }

 private:
  const ParameterLayout& layout_;
  TrackedBuffer<float> master_;
  AdamWState state_;
};

TEST(MemorySeams, AnOptimizerFromTheOptionsTrainsLikeAdamW) {
  TrainOptions o;
  o.precision = DType::kBF16;
  o.micro_batch = 4;
  MemoryTracker plain_tracker, seam_tracker;
  Trainer plain(o, &plain_tracker);
  o.optimizer = [](const ParameterLayout& layout, MemoryTracker* tracker) {
    return std::unique_ptr<TrainerOptimizer>(std::make_unique<OwnAdamW>(layout, tracker));
  };
  Trainer seam(o, &seam_tracker);
  for (int i = 0; i < 3; ++i) {
    const float a = plain.step().loss, b = seam.step().loss;
    EXPECT_EQ(std::memcmp(&a, &b, sizeof(float)), 0)
        << "step " << i + 1 << ": " << a << " vs " << b;
  }
  EXPECT_EQ(std::memcmp(plain.model().params().data(), seam.model().params().data(),
                        plain.model().params().bytes()),
            0);
  // The same bytes, owned by the optimizer instead of the trainer.
  for (MemoryCategory c : all_memory_categories())
    EXPECT_EQ(plain_tracker.peak(c), seam_tracker.peak(c)) << memory_category_name(c);
  testing::expect_error([&] { seam.save("/tmp/memory_seams_never.ckpt"); },
                        {"save", "TrainOptions::optimizer"});
  testing::expect_error([&] { seam.load("/tmp/memory_seams_never.ckpt"); },
                        {"load", "TrainOptions::optimizer"});
}

}  // namespace
}  // namespace book::train
