// Tests of the training step's scaffolding pieces (not exercises): clipping through sums of
// squares, mixed precision over spans, the layout's pieces of a range and its decay mask, and the
// argument checks of the range optimizer. They pass on both tracks.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "chapters/04_training_baseline/adamw_state.h"
#include "chapters/04_training_baseline/clipping.h"
#include "chapters/04_training_baseline/mixed_precision.h"
#include "common/rng.h"
#include "common/testing/expect_error.h"
#include "tests/04_training_baseline/gradcheck.h"

namespace book::train {
namespace {

using book::testing::expect_error;

TEST(Clipping, ShardedSumsOfSquaresGiveTheOneDeviceFactor) {
  // Three "ranks" each hold a part; the sum of their sums of squares is the global one, so every
  // rank scales by the factor one device would use.
  Rng rng(41);
  std::vector<float> grads(1001);
  for (auto& g : grads) g = static_cast<float>(rng.uniform(-0.2, 0.2));
  std::vector<float> one_device = grads;
  const double norm = clip_global_norm(one_device, 0.5);
  double squares = 0;
  for (std::size_t begin : {0, 400, 777})
    squares += sum_of_squares(std::span<const float>(grads).subspan(begin, (begin == 777   ? 1001
                                                                            : begin == 400 ? 777
                                                                                           : 400) -
                                                                               begin));
  EXPECT_NEAR(std::sqrt(squares), norm, 1e-12 * norm);
  const float factor = clip_coefficient(squares, 0.5);
  EXPECT_LT(factor, 1.0f) << "norm " << norm << " is above 0.5, so it clips";
  scale_gradients(grads, factor);
  for (std::size_t i = 0; i < grads.size(); ++i)
    ASSERT_FLOAT_EQ(grads[i], one_device[i]) << "element " << i;
  EXPECT_EQ(clip_coefficient(0.24, 0.5), 1.0f) << "norm 0.49 is within 0.5: exactly 1";
  EXPECT_FLOAT_EQ(clip_coefficient(4.0, 0.5), 0.25f) << "norm 2 clipped to 0.5";
  expect_error([] { clip_coefficient(1.0, 0.0); }, "max_norm must be positive, got 0");
  expect_error([] { clip_coefficient(-1.0, 1.0); }, "cannot be negative, got -1");
}

TEST(MixedPrecisionSpans, MatchTheScalarConversionsAndUnscaleExactly) {
  Rng rng(42);
  std::vector<float> values(333);
  for (auto& v : values) v = static_cast<float>(rng.uniform(-1e5, 1e5) * rng.uniform());
  for (DType p : {DType::kBF16, DType::kF16}) {
    std::vector<std::uint16_t> bits(values.size(), 0xdead);
    std::vector<float> back(values.size(), std::numeric_limits<float>::quiet_NaN());
    encode(p, values, bits);
    decode(p, bits, back);
    for (std::size_t i = 0; i < values.size(); ++i) {
      ASSERT_EQ(bits[i], encode(p, values[i])) << dtype_name(p) << " of " << values[i];
      ASSERT_EQ(back[i], round_to(p, values[i])) << values[i];
    }
  }
  std::vector<float> grads = {65536.0f, -3.0f, 1.5f};
  unscale(grads, 65536.0f);
  EXPECT_EQ(grads, (std::vector<float>{1.0f, -3.0f / 65536.0f, 1.5f / 65536.0f}));
  EXPECT_TRUE(all_finite(grads));
  grads[1] = std::numeric_limits<float>::infinity();
  EXPECT_FALSE(all_finite(grads));
  std::vector<std::uint16_t> short_bits(2);
  expect_error([&] { encode(DType::kF16, grads, short_bits); },
               "3 values but room for 2 16-bit patterns");
  expect_error([&] { decode(DType::kF32, short_bits, grads); },
               "f32 has no 16-bit encoding; use bf16 or f16");
  expect_error([&] { unscale(grads, 0.0f); }, "loss scale must be positive, got 0");
}

TEST(ParameterLayout, PiecesOfARangeCutTensorsAndTheDecayMaskFollowsSlots) {
  Config c;
  c.d_model = 8, c.n_head = 2, c.n_layer = 1;
  const ParameterLayout layout(c);
  const TensorSlot& qkv = layout.find("h0.w_qkv");
  const auto pieces = layout.pieces(qkv.offset - 3, qkv.offset + 10);
  ASSERT_EQ(pieces.size(), 2u) << "the last 3 elements of h0.ln1_bias, then 10 of h0.w_qkv";
  EXPECT_EQ(pieces[0].slot->name, "h0.ln1_bias");
  EXPECT_EQ(pieces[0].end - pieces[0].begin, 3u);
  EXPECT_EQ(pieces[1].slot->name, "h0.w_qkv");
  EXPECT_EQ(pieces[1].begin, qkv.offset);
  EXPECT_EQ(pieces[1].end, qkv.offset + 10);
  EXPECT_TRUE(layout.pieces(5, 5).empty());
  for (const auto& slot : layout.slots())
    for (std::size_t i = slot.offset; i < slot.offset + slot.size(); ++i)
      ASSERT_EQ(layout.decays(i), slot.decay) << slot.name << " element " << i - slot.offset;
  expect_error([&] { layout.pieces(4, layout.total() + 1); }, "is not inside the flat buffer");
  expect_error([&] { layout.decays(layout.total()); }, "is outside the flat buffer");
}

TEST(AdamWState, CoversItsRangeAndRefusesMismatchedSpans) {
  Config c;
  c.d_model = 8, c.n_head = 2, c.n_layer = 1;
  const ParameterLayout layout(c);
  AdamWState state(10, 30);
  EXPECT_EQ(state.size(), 20u);
  EXPECT_EQ(state.m().size(), 20u);
  EXPECT_EQ(state.v()[19], 0.0f) << "the moments start at zero";
  std::vector<float> params(20, 1.0f), grads(19, 0.5f);
  expect_error([&] { adamw_update(layout, state, params, grads, 0.1f, AdamWConfig{}); },
               "the state covers 20 elements [10, 30), got 20 parameters and 19 gradients");
  EXPECT_EQ(state.step(), 0) << "a refused update is not counted";
  AdamWState outside(layout.total() - 2, layout.total() + 3);
  std::vector<float> five(5, 1.0f);
  expect_error([&] { adamw_update(layout, outside, five, five, 0.1f, AdamWConfig{}); },
               "is not inside the flat buffer");
  expect_error([] { AdamWState(5, 4); }, "range [5, 4) ends before it begins");
  expect_error([&] { state.set_step(-1); }, "cannot be negative, got -1");
}

}  // namespace
}  // namespace book::train
