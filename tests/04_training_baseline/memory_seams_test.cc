// Chapter 4's memory seams (memory_seams.h) with chapter 4's own pieces behind them: an
// activation policy that keeps everything in buffers of its own, an attention kernel that is
// chapter 4's attention, and an optimizer that is chapter 4's AdamW (holding its master weights
// itself) train exactly as the defaults do.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <vector>

#include "chapters/04_training_baseline/adamw_state.h"
#include "chapters/04_training_baseline/memory_seams.h"
#include "chapters/04_training_baseline/model.h"
#include "chapters/04_training_baseline/step.h"
#include "chapters/04_training_baseline/trainer.h"
#include "common/rng.h"
#include "common/testing/expect_error.h"
#include "tests/04_training_baseline/seam_testing.h"

namespace book::train {
namespace {

using book::testing::MaterialisingKernel;
using book::testing::SeamRun;

void expect_same_training(const SeamRun& r, const SeamRun& plain, const char* what) {
  EXPECT_EQ(std::memcmp(&r.loss, &plain.loss, sizeof(double)), 0) << what;
  ASSERT_EQ(r.grads.size(), plain.grads.size()) << what;
  EXPECT_EQ(std::memcmp(r.grads.data(), plain.grads.data(), r.grads.size() * sizeof(double)), 0)
      << what << ": gradients differ";
}

TEST(MemorySeams, AnAttentionKernelKeepsGradientsBitForBit) {
  const SeamRun plain = testing::run_tiny_seam({});
  MaterialisingKernel kernel;
  ModelOptions<double> o;
  o.attention = &kernel;
  const SeamRun r = testing::run_tiny_seam(o);
  expect_same_training(r, plain, "chapter 4's attention as a kernel");
  EXPECT_EQ(r.activation_bytes, plain.activation_bytes) << "it saves the same probabilities";
  EXPECT_EQ(kernel.forwards, 3) << "once per block";
  EXPECT_EQ(kernel.backwards, 3) << "once per block";
}

// A policy that keeps every block's activations, as the default does, in buffers of its own
// that it does not hand out, counting the blocks it runs.
struct Counts {
  int forwards = 0, backwards = 0;
};
class KeepInOwnBuffers final : public BlockMemory<double> {
 public:
  KeepInOwnBuffers(const Model<double>& model, Counts& counts) : counts_(&counts) {
    for (int l = 0; l < model.config().n_layer; ++l) blocks_.push_back(model.block_activations());
  }
  void forward(Model<double>& model, Activations<double>& acts, int layer) override {
    ++counts_->forwards;
    model.forward_block(acts, layer, blocks_[layer], blocks_[layer].att.data());
  }
  void backward(Model<double>& model, Activations<double>& acts, int layer) override {
    ++counts_->backwards;
    model.backward_block(acts, layer, blocks_[layer]);
  }
  BlockActivations<double>* kept(int) override { return nullptr; }
  std::size_t bytes() const override {
    std::size_t total = 0;
    for (const auto& b : blocks_) total += b.bytes();
    return total;
  }

 private:
  Counts* counts_;
  std::vector<BlockActivations<double>> blocks_;
};

TEST(MemorySeams, AnActivationPolicyRunsEveryBlockAndKeepsGradientsBitForBit) {
  const SeamRun plain = testing::run_tiny_seam({});
  Counts counts;
  ModelOptions<double> o;
  o.activation_policy = [&](const Model<double>& model) {
    return std::make_unique<KeepInOwnBuffers>(model, counts);
  };
  const SeamRun r = testing::run_tiny_seam(o);
  expect_same_training(r, plain, "a policy that keeps everything");
  EXPECT_EQ(r.activation_bytes, plain.activation_bytes) << "the same buffers, held elsewhere";
  EXPECT_EQ(counts.forwards, 3);
  EXPECT_EQ(counts.backwards, 3);
}

TEST(MemorySeams, MisusedActivationPolicyIsRefused) {
  Counts counts;
  ModelOptions<double> o;
  o.activation_policy = [&](const Model<double>& model) {
    return std::make_unique<KeepInOwnBuffers>(model, counts);
  };
  Model<double> model(testing::tiny_seam_config(), 2, o);
  Activations<double>& acts = model.activations();
  testing::expect_error([&] { acts.block(1); }, {"activation policy does not keep block 1",
                                                 "ModelOptions::activation_policy"});
  testing::expect_error([&] { acts.layer_bytes(1); }, {"layer_bytes", "does not keep block 1"});
  acts.set_shape(2, 5);
  BlockActivations<double> block = model.block_activations();
  testing::expect_error([&] { model.forward_block(acts, 3, block, block.att.data()); },
                        {"forward_block", "block 3 is not one of this part's blocks 0..2"});
  testing::expect_error([&] { model.backward_block(acts, -1, block); },
                        {"backward_block", "block -1"});
  o.activation_policy = [](const Model<double>&) { return std::unique_ptr<BlockMemory<double>>(); };
  Model<double> broken(testing::tiny_seam_config(), 2, o);
  testing::expect_error([&] { broken.activations(); }, {"activation policy made no BlockMemory"});
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
