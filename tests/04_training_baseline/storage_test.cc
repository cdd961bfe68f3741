// Tests of storage (not exercises): 16-bit rounding against an independent nearest-value search,
// the checkpoint file (truncated, corrupted, wrong version, wrong model), the memory accounting.
// They pass on both tracks.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "chapters/04_training_baseline/checkpoint.h"
#include "chapters/04_training_baseline/precision.h"
#include "chapters/04_training_baseline/trainer.h"
#include "common/check.h"
#include "common/rng.h"

namespace book::train {
namespace {

// The reference for 16-bit rounding: among all finite values of the format (plus the first
// value past the largest, standing for infinity), the nearest to x, ties to the even pattern.
template <typename Decode>
std::uint16_t nearest_pattern(float x, Decode decode, std::uint16_t max_finite,
                              double overflow_value) {
  const double v = std::fabs(static_cast<double>(x));
  std::uint16_t lo = 0, hi = max_finite;  // binary search over the monotone positive patterns
  while (lo < hi) {
    const std::uint16_t mid = static_cast<std::uint16_t>((lo + hi + 1) / 2);
    if (decode(mid) <= v)
      lo = mid;
    else
      hi = static_cast<std::uint16_t>(mid - 1);
  }
  const double below = decode(lo);
  const double above =
      lo == max_finite ? overflow_value : decode(static_cast<std::uint16_t>(lo + 1));
  std::uint16_t pick = lo;
  if (v - below > above - v || (v - below == above - v && (lo & 1)))
    pick = static_cast<std::uint16_t>(lo + 1);
  return static_cast<std::uint16_t>(pick | (std::signbit(x) ? 0x8000 : 0));
}

TEST(Precision, Fp16RoundsToNearestEven) {
  Rng rng(6);
  auto decode = [](std::uint16_t b) { return static_cast<double>(fp16_to_float(b)); };
  std::vector<float> values = {65504.0f,
                               65519.99f,
                               65520.0f,
                               1e-8f,
                               2.98023224e-8f /* 2^-25: tie to 0 */,
                               2.98023259e-8f,
                               6.1035156e-5f,
                               6.09e-5f,
                               1.0f + 1.0f / 2048,
                               1.0f + 3.0f / 2048};
  for (int i = 0; i < 20000; ++i) {
    const float magnitude = static_cast<float>(
        std::ldexp(rng.uniform(1.0, 2.0), static_cast<int>(rng.uniform_int(-27, 16))));
    values.push_back(rng.uniform() < 0.5 ? -magnitude : magnitude);
  }
  for (float x : values) {
    const std::uint16_t expected = nearest_pattern(x, decode, 0x7bff, 65536.0);
    ASSERT_EQ(float_to_fp16(x), expected)
        << "x = " << x << " (bits " << std::hex << std::bit_cast<std::uint32_t>(x) << ")";
  }
  EXPECT_EQ(float_to_fp16(1.0f + 1.0f / 2048), 0x3c00)
      << "1 + half an ulp is a tie: rounds to the even 1.0";
  EXPECT_EQ(float_to_fp16(1.0f + 3.0f / 2048), 0x3c02)
      << "1 + 1.5 ulp is a tie: rounds to the even 1 + 2 ulp";
}

TEST(Precision, Bf16RoundsToNearestEven) {
  Rng rng(7);
  auto decode = [](std::uint16_t b) { return static_cast<double>(bf16_to_float(b)); };
  for (int i = 0; i < 20000; ++i) {
    const float x =
        std::bit_cast<float>(static_cast<std::uint32_t>(rng.next_u64()) & 0x7f7fffffu);  // finite
    const std::uint16_t expected = nearest_pattern(x, decode, 0x7f7f, std::ldexp(1.0, 128));
    ASSERT_EQ(float_to_bf16(x), expected) << "x = " << x;
  }
  EXPECT_EQ(float_to_bf16(std::numeric_limits<float>::max()), 0x7f80)
      << "FLT_MAX rounds up to +inf in BF16";
}

TEST(Precision, RoundTripsAndSpecialValues) {
  for (std::uint32_t b = 0; b < 65536; ++b) {  // every 16-bit pattern converts to float and back
    const auto bits = static_cast<std::uint16_t>(b);
    const float h = fp16_to_float(bits), bf = bf16_to_float(bits);
    if (std::isnan(h))
      EXPECT_TRUE(std::isnan(fp16_to_float(float_to_fp16(h))));
    else
      ASSERT_EQ(float_to_fp16(h), bits) << "fp16 pattern " << std::hex << b;
    if (std::isnan(bf))
      EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(bf))));
    else
      ASSERT_EQ(float_to_bf16(bf), bits) << "bf16 pattern " << std::hex << b;
  }
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(float_to_fp16(inf), 0x7c00);
  EXPECT_EQ(float_to_fp16(-inf), 0xfc00);
  EXPECT_EQ(float_to_bf16(-inf), 0xff80);
  // A NaN whose payload sits only in the low bits must stay NaN, not round to infinity.
  const float low_nan = std::bit_cast<float>(0x7f800001u);
  EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(low_nan))));
  EXPECT_TRUE(std::isnan(fp16_to_float(float_to_fp16(low_nan))));
  EXPECT_EQ(fp16_to_float(0x0001), std::ldexp(1.0f, -24)) << "smallest FP16 subnormal";
  EXPECT_THROW(encode(Precision::kFP32, 1.0f), book::Error);
}

TEST(Precision, AllFiniteAndLossScalerArguments) {
  std::vector<float> v = {1.0f, -2.0f, 3.0f};
  EXPECT_TRUE(all_finite(v));
  v[1] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_FALSE(all_finite(v));
  LossScaler::Options bad;
  bad.backoff_factor = 2.0f;
  EXPECT_THROW(LossScaler{bad}, book::Error);
  LossScaler::Options bad_min;
  bad_min.min_scale = 0;
  EXPECT_THROW(LossScaler{bad_min}, book::Error);
  LossScaler scaler;
  EXPECT_THROW(scaler.restore(1e30f, 0), book::Error);
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
    try {
      trainer.load(path);
      ADD_FAILURE() << "the checkpoint was accepted; expected an error mentioning '" << fragment
                    << "'";
    } catch (const book::Error& error) {
      EXPECT_NE(std::string(error.what()).find(fragment), std::string::npos)
          << "the error was: " << error.what() << "; expected it to mention '" << fragment << "'";
    }
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
  EXPECT_THROW(trainer.load(path), book::Error);
}

TEST(Memory, MixedPrecisionAdamHoldsSixteenBytesPerParameter) {
  TrainOptions o = small_options();
  o.precision = Precision::kFP16;
  const MemoryReport m = Trainer(o).memory();
  EXPECT_EQ(m.low_weights, 2u * m.parameters);
  EXPECT_EQ(m.low_grads, 2u * m.parameters);
  EXPECT_EQ(m.master_weights, 4u * m.parameters);
  EXPECT_EQ(m.adam_moments, 8u * m.parameters);
  EXPECT_EQ(m.state_bytes_per_parameter(), 16.0);
}

TEST(Memory, ActivationsFollowTheCountedFormula) {
  // Per token, per layer: LN1 out C + QKV 3C + attention output C + residual C + LN2 out C +
  // MLP 4C pre- and 4C post-GELU = 15C, the attention probabilities H·T, and 2 LayerNorms' mean
  // and rstd (4). Plus the residual stream at L+1 boundaries, the final LayerNorm (C + 2) and
  // logits and probabilities (2V). FP32: 4 bytes each.
  TrainOptions o = small_options();  // d_model 16, 2 heads, 2 layers, 2-digit addition
  Trainer trainer(o);
  const std::int64_t c = 16, h = 2, l = 2, v = 12, t = trainer.task().model_context(),
                     b = o.micro_batch;
  const std::int64_t floats_per_token = l * (15 * c + h * t + 4) + (l + 1) * c + (c + 2) + 2 * v;
  EXPECT_EQ(trainer.memory().activations, static_cast<std::size_t>(4 * b * t * floats_per_token));
}

}  // namespace
}  // namespace book::train
