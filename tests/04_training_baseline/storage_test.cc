// Tests of storage (not exercises): the 16-bit encoding of a DType (its rounding is tested
// with common/float16.h), the checkpoint file (truncated, corrupted, wrong version, wrong model),
// the memory accounting. They pass on both tracks.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "chapters/04_training_baseline/checkpoint.h"
#include "chapters/04_training_baseline/mixed_precision.h"
#include "chapters/04_training_baseline/precision.h"
#include "chapters/04_training_baseline/trainer.h"
#include "common/check.h"
#include "common/rng.h"
#include "common/testing/expect_error.h"

namespace book::train {
namespace {

using book::testing::expect_error;

TEST(Precision, EncodeNeedsA16BitFormat) {
  expect_error([] { encode(DType::kF32, 1.0f); }, "encode: f32 has no 16-bit encoding");
  expect_error([] { decode(DType::kF64, 0x3c00); }, "decode: f64 has no 16-bit encoding");
  EXPECT_EQ(encode(DType::kBF16, 1.0f), float_to_bf16(1.0f));
  EXPECT_EQ(decode(DType::kF16, 0x3c00), 1.0f);
}

TEST(Precision, AllFiniteAndLossScalerArguments) {
  std::vector<float> v = {1.0f, -2.0f, 3.0f};
  EXPECT_TRUE(all_finite(v));
  v[1] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_FALSE(all_finite(v));
  LossScaler::Options bad;
  bad.backoff_factor = 2.0f;
  expect_error([&] { LossScaler{bad}; }, "0 < backoff_factor < 1, got 2 and 2");
  LossScaler::Options bad_min;
  bad_min.min_scale = 0;
  expect_error([&] { LossScaler{bad_min}; }, "need 0 < min_scale <= initial_scale");
  LossScaler scaler;
  expect_error([&] { scaler.restore(1e30f, 0); },
               "state (scale 1e+30, clean steps 0) is outside this scaler's options");
  scaler.restore(1024.0f, 5);
  EXPECT_EQ(scaler.scale(), 1024.0f);
}

TrainOptions small_options() {
  TrainOptions o;
  o.digits = 2;
  o.model.d_model = 16;
  o.model.n_head = 2;
  o.micro_batch = 4;
  return o;
}

class CheckpointFile : public ::testing::Test {
 protected:
  std::string path = ::testing::TempDir() + "/ch04_scaffolding.ckpt";
  void SetUp() override { Trainer(small_options()).save(path); }
  void TearDown() override { std::remove(path.c_str()); }
  std::vector<char> bytes() {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }
  void write(const std::vector<char>& b) {
    std::ofstream(path, std::ios::binary).write(b.data(), b.size());
  }
  void expect_refused(const std::string& fragment) {
    Trainer trainer(small_options());
    expect_error([&] { trainer.load(path); }, fragment);
  }
};

TEST_F(CheckpointFile, LoadsWhatWasSavedAndLeavesNoTemporary) {
  Trainer trainer(small_options());
  trainer.load(path);
  EXPECT_EQ(trainer.steps_done(), 0);
  EXPECT_FALSE(std::ifstream(path + ".tmp").good()) << "the temporary file must have been renamed";
}

TEST_F(CheckpointFile, RefusesATruncatedFile) {
  auto b = bytes();
  b.resize(b.size() - 100);
  write(b);
  expect_refused("truncated");
}

TEST_F(CheckpointFile, RefusesACorruptedByte) {
  auto b = bytes();
  b[b.size() / 2] ^= 0x10;  // one flipped bit inside the weights
  write(b);
  expect_refused("corrupted");
}

TEST_F(CheckpointFile, RefusesAnotherVersionOrNotACheckpoint) {
  auto b = bytes();
  b[8] = 99;  // the version field
  write(b);
  expect_refused("format version 99");
  write(std::vector<char>{'h', 'e', 'l', 'l', 'o'});
  expect_refused("not a checkpoint");
  std::remove(path.c_str());
  expect_refused("cannot open");
}

TEST_F(CheckpointFile, RefusesAnotherModel) {
  TrainOptions other = small_options();
  other.model.d_model = 32;
  Trainer trainer(other);
  expect_error([&] { trainer.load(path); },
               "is of another model (2 layers, d_model 16, 2 heads); this trainer has 2, 32, 2");
  other = small_options();
  other.precision = DType::kBF16;
  Trainer bf16(other);
  expect_error([&] { bf16.load(path); },
               "written by a run of precision code 0 (0 f32, 1 bf16, "
               "2 f16); this trainer is bf16 (code 1)");
}

TEST(TrainOptions, RefusesBadOptions) {
  TrainOptions o = small_options();
  o.precision = DType::kF64;
  expect_error([&] { Trainer{o}; }, "f64 is not a training precision; use f32, bf16 or f16");
  o = small_options();
  o.accumulation = 0;
  expect_error([&] { Trainer{o}; }, "micro_batch and accumulation must be >= 1, got 4 and 0");
  o = small_options();
  o.clip_norm = -1;
  expect_error([&] { Trainer{o}; }, "clip_norm must be positive and finite, got -1");
  o = small_options();
  o.warmup_steps = o.total_steps + 1;
  expect_error([&] { Trainer{o}; }, "need 0 <= warmup_steps <= total_steps");
}

TEST(Memory, MixedPrecisionAdamHoldsSixteenBytesPerParameter) {
  TrainOptions o = small_options();
  o.precision = DType::kF16;
  const MemoryReport m = Trainer(o).memory();
  EXPECT_EQ(m.low_weights, 2u * m.parameters);
  EXPECT_EQ(m.low_grads, 2u * m.parameters);
  EXPECT_EQ(m.master_weights, 4u * m.parameters);
  EXPECT_EQ(m.adam_moments, 8u * m.parameters);
  EXPECT_EQ(m.state_bytes_per_parameter(), 16.0);
}

TEST(Memory, ActivationsAndWorkspaceFollowTheCountedFormulas) {
  // Activations, per token: the token id and the target (2 ints); per layer LN1 out C + QKV 3C +
  // attention output C + residual C + LN2 out C + MLP 4C pre- and 4C post-GELU = 15C, the
  // attention probabilities H·T and 2 LayerNorms' mean and rstd (4); the residual stream and its
  // gradient at the L+1 boundaries, 2(L+1)C; the final LayerNorm (C + 2), logits and
  // probabilities (2V). Workspace, per token: a block's 3C + 2·4C + C + 3C = 15C and the head's
  // C + V. FP32: 4 bytes each.
  TrainOptions o = small_options();  // d_model 16, 2 heads, 2 layers, 2-digit addition
  Trainer trainer(o);
  const std::int64_t c = 16, h = 2, l = 2, v = 12, t = trainer.task().model_context(),
                     b = o.micro_batch;
  const std::int64_t floats_per_token =
      l * (15 * c + h * t + 4) + 2 * (l + 1) * c + (c + 2) + 2 * v;
  EXPECT_EQ(trainer.memory().activations,
            static_cast<std::size_t>(b * t * (4 * floats_per_token + 2 * 4)));
  EXPECT_EQ(trainer.memory().workspace, static_cast<std::size_t>(4 * b * t * (15 * c + c + v)));
}

// The tracker sees every buffer of a training step under its category, and the step allocates
// nothing: the peak is what construction left live.
TEST(Memory, TrackerCategoriesEqualTheFormulas) {
  for (DType p : {DType::kF32, DType::kBF16}) {
    SCOPED_TRACE(dtype_name(p));
    TrainOptions o = small_options();
    o.precision = p;
    MemoryTracker tracker;
    Trainer trainer(o, &tracker);
    const std::size_t n = static_cast<std::size_t>(trainer.options().model.parameter_count());
    const MemoryReport r = trainer.memory();
    const bool mixed = p != DType::kF32;
    using C = MemoryCategory;
    EXPECT_EQ(tracker.current(C::kParameters), (mixed ? 2 : 4) * n);
    EXPECT_EQ(tracker.current(C::kGradients), (mixed ? 2 : 4) * n);
    EXPECT_EQ(tracker.current(C::kMasterWeights), (mixed ? 4 : 0) * n);
    EXPECT_EQ(tracker.current(C::kOptimizerStates), 8 * n);
    EXPECT_EQ(tracker.current(C::kParameters) + tracker.current(C::kGradients) +
                  tracker.current(C::kMasterWeights) + tracker.current(C::kOptimizerStates),
              16 * n)
        << "16 bytes of model state per parameter";
    EXPECT_EQ(tracker.current(C::kActivations), r.activations);
    EXPECT_EQ(tracker.current(C::kOther), r.workspace + (mixed ? 8 * n : 0))
        << "the workspace, and in mixed precision the FP32 copies of the 16-bit weights and "
           "gradients that only a CPU needs";
    EXPECT_EQ(tracker.current(C::kCommunication), 0u);
    const std::size_t after_construction = tracker.current_total();
    trainer.step();
    trainer.step();
    trainer.validation_loss(1);
    EXPECT_EQ(tracker.current_total(), after_construction);
    EXPECT_EQ(tracker.peak_total(), after_construction) << "a step allocates nothing it tracks";
    for (MemoryCategory category : all_memory_categories())
      EXPECT_EQ(tracker.at_peak()[category], tracker.current(category))
          << memory_category_name(category);
  }
}

}  // namespace
}  // namespace book::train
