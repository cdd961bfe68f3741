// Graded tests of the quantisers: per-channel INT8 against its definition and its s/2 bound,
// INT4 packing both ways, the INT8 GEMV against a dequantise-then-FP32 reference, SmoothQuant's
// scales (and that they leave X·W unchanged), AWQ's search against plain rounding.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "chapters/14_quantization/quant.h"
#include "common/rng.h"
#include "common/testing/exercise.h"
#include "common/testing/expect_error.h"

namespace book::quant {
namespace {

using book::testing::expect_error;

std::vector<float> random_values(std::size_t n, Rng& rng, double scale = 1.0) {
  std::vector<float> v(n);
  for (float& x : v) x = static_cast<float>(rng.uniform(-scale, scale));
  return v;
}

EXERCISE_TEST("quant.per_channel_int8", PerChannelInt8,
              ScalesAreRowMaximaAndValuesWithinHalfAScale) {
  Rng rng(14);
  const int rows = 7, cols = 33;
  std::vector<float> w = random_values(rows * cols, rng);
  for (int c = 0; c < cols; ++c) w[3 * cols + c] = 0;  // an all-zero row
  w[5 * cols + 4] = -9.5f;                             // a row with one large value
  const QuantizedMatrix q = quantize_per_channel_int8(w, rows, cols);
  ASSERT_EQ(q.rows, rows);
  ASSERT_EQ(q.cols, cols);
  ASSERT_EQ(q.scales.size(), static_cast<std::size_t>(rows));
  ASSERT_EQ(q.data.size(), static_cast<std::size_t>(rows * cols));
  EXPECT_EQ(q.scales[3], 1.0f) << "an all-zero row gets scale 1";
  EXPECT_FLOAT_EQ(q.scales[5], 9.5f / 127.0f);
  EXPECT_EQ(q.q(5, 4), -127);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      const float x = w[r * cols + c];
      EXPECT_EQ(q.q(r, c), std::lround(x / q.scales[r])) << "row " << r << ", col " << c;
      EXPECT_LE(std::abs(q.value(r, c) - x), q.scales[r] / 2 * (1 + 1e-6f))
          << "row " << r << ", col " << c;
    }
}

EXERCISE_TEST("quant.per_channel_int8", PerChannelInt8, RefusesBadInput) {
  const std::vector<float> w = {1, 2, NAN, 4};
  expect_error([&] { quantize_per_channel_int8(w, 2, 2); }, {"weights[2]", "nan"});
  expect_error([&] { quantize_per_channel_int8(w, 3, 2); }, {"needs 6 values", "got 4"});
}

EXERCISE_TEST("quant.int4_pack", Int4Pack, LowNibbleFirstAndBack) {
  const std::vector<std::uint8_t> values = {1, 2, 15, 0, 7, 8};
  const std::vector<std::uint8_t> packed = pack_int4(values);
  ASSERT_EQ(packed, (std::vector<std::uint8_t>{0x21, 0x0f, 0x87}));
  EXPECT_EQ(unpack_int4(packed), values);
  expect_error([] { pack_int4(std::vector<std::uint8_t>{1, 2, 3}); }, "even");
  expect_error([] { pack_int4(std::vector<std::uint8_t>{1, 16}); }, {"value 1", "16"});
}

EXERCISE_TEST("quant.int4_pack", Int4Pack, Int4GroupQuantisationRoundTripsWithinHalfAScale) {
  Rng rng(4);
  const int rows = 5, cols = 64;
  const std::vector<float> w = random_values(rows * cols, rng, 3.0);
  for (const Symmetry symmetry : {Symmetry::kSymmetric, Symmetry::kAsymmetric}) {
    const Scheme scheme{Bits::kInt4, symmetry, Granularity::kGroup, 16};
    const QuantizedMatrix q = quantize(w, rows, cols, scheme);
    ASSERT_EQ(q.data.size(), static_cast<std::size_t>(rows * cols / 2));
    std::vector<float> back(w.size());
    dequantize(q, back);
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c) {
        EXPECT_GE(q.q(r, c), qmin(scheme));
        EXPECT_LE(q.q(r, c), qmax(scheme));
        EXPECT_LE(std::abs(back[r * cols + c] - w[r * cols + c]), q.scale(r, c) / 2 * (1 + 1e-5f))
            << scheme.name() << " row " << r << ", col " << c;
      }
  }
}

// Every INT4 scheme (symmetric and asymmetric; per tensor, per channel, groups of 32, 64, 128)
// through quantize(), which packs with the exercise: within half a scale, zero exact, and the
// bytes counted exactly (INT4 g128 symmetric: 4 + 32 / 128 = 4.25 bits a weight).
EXERCISE_TEST("quant.int4_pack", Int4Pack, EverySchemeRoundTripsKeepsZeroAndCountsItsBits) {
  Rng rng(44);
  const int rows = 5, cols = 384;  // 3 · 128
  std::vector<float> w = random_values(rows * cols, rng, 2.0);
  for (std::size_t i = 0; i < w.size(); i += 7) w[i] = 0;
  for (int c = 0; c < 64; ++c) w[cols + c] = 0;  // an all-zero group
  for (const Symmetry symmetry : {Symmetry::kSymmetric, Symmetry::kAsymmetric})
    for (const Granularity granularity :
         {Granularity::kPerTensor, Granularity::kPerChannel, Granularity::kGroup})
      for (const int g : {32, 64, 128}) {
        if (granularity != Granularity::kGroup && g != 32) continue;
        const Scheme scheme{Bits::kInt4, symmetry, granularity, g};
        const QuantizedMatrix q = quantize(w, rows, cols, scheme);
        std::vector<float> back(w.size(), NAN);
        dequantize(q, back);
        for (int r = 0; r < rows; ++r)
          for (int c = 0; c < cols; ++c) {
            const float x = w[r * cols + c], y = back[r * cols + c];
            ASSERT_GE(q.q(r, c), qmin(scheme)) << scheme.name();
            ASSERT_LE(q.q(r, c), qmax(scheme)) << scheme.name();
            if (x == 0) {
              ASSERT_EQ(y, 0.0f) << scheme.name() << " row " << r << ", col " << c;
            }
            ASSERT_LE(std::abs(y - x), q.scale(r, c) / 2 * (1 + 1e-5f) + 1e-6f * std::abs(x))
                << scheme.name() << " row " << r << ", col " << c;
          }
        std::size_t scales = 1;
        if (granularity == Granularity::kPerChannel) scales = rows;
        if (granularity == Granularity::kGroup) scales = rows * (cols / g);
        const bool asym = symmetry == Symmetry::kAsymmetric;
        ASSERT_EQ(q.data.size(), static_cast<std::size_t>(rows * cols / 2));
        EXPECT_EQ(q.bytes(), rows * cols / 2 + scales * (asym ? 5 : 4)) << scheme.name();
        EXPECT_DOUBLE_EQ(q.bits_per_weight(), 4 + 8.0 * scales * (asym ? 5 : 4) / (rows * cols))
            << scheme.name();
        if (granularity == Granularity::kGroup && g == 128) {
          EXPECT_DOUBLE_EQ(q.bits_per_weight(), asym ? 4.3125 : 4.25);
        }
      }
}

// quantize() with the per-channel symmetric INT8 scheme is the exercise; zero stays exact and
// the cost is 8 bits plus one 32-bit scale a row.
EXERCISE_TEST("quant.per_channel_int8", PerChannelInt8, ThroughQuantizeKeepsZeroAndCountsItsBits) {
  Rng rng(15);
  const int rows = 6, cols = 100;
  std::vector<float> w = random_values(rows * cols, rng);
  for (std::size_t i = 0; i < w.size(); i += 5) w[i] = 0;
  const QuantizedMatrix q = quantize(w, rows, cols, Scheme{});
  std::vector<float> back(w.size(), NAN);
  dequantize(q, back);
  for (std::size_t i = 0; i < w.size(); ++i) {
    if (w[i] == 0) {
      ASSERT_EQ(back[i], 0.0f) << i;
    }
    ASSERT_LE(std::abs(back[i] - w[i]), q.scales[i / cols] / 2 * (1 + 1e-5f)) << i;
  }
  EXPECT_EQ(q.bytes(), static_cast<std::size_t>(rows * cols + rows * 4));
  EXPECT_DOUBLE_EQ(q.bits_per_weight(), 8 + 32.0 / cols);
}

EXERCISE_TEST("quant.int8_gemv", Int8Gemv, EqualsTheDequantisedProduct) {
  Rng rng(8);
  const int rows = 9, cols = 96;
  const std::vector<float> w = random_values(rows * cols, rng), x = random_values(cols, rng);
  for (const Scheme scheme : {Scheme{Bits::kInt8, Symmetry::kSymmetric, Granularity::kPerTensor},
                              Scheme{Bits::kInt8, Symmetry::kSymmetric, Granularity::kGroup, 32}}) {
    const QuantizedMatrix q = quantize(w, rows, cols, scheme);
    std::vector<float> y(rows, NAN);
    int8_gemv(q, x, y);
    for (int r = 0; r < rows; ++r) {
      double want = 0, magnitude = 0;
      for (int c = 0; c < cols; ++c) {
        want += static_cast<double>(q.value(r, c)) * x[c];
        magnitude += std::abs(static_cast<double>(q.value(r, c)) * x[c]);
      }
      EXPECT_NEAR(y[r], want, 1e-5 * magnitude + 1e-6) << scheme.name() << ", row " << r;
    }
  }
  const QuantizedMatrix int4 =
      quantize(w, rows, cols, {Bits::kInt4, Symmetry::kSymmetric, Granularity::kGroup, 32});
  std::vector<float> y(rows);
  expect_error([&] { int8_gemv(int4, x, y); }, "int4 g32");
}

EXERCISE_TEST("quant.smooth_scales", SmoothScales, BalanceTheMaximaAndKeepTheProduct) {
  const std::vector<float> a = {100, 1, 0, 4}, w = {0.25f, 1, 3, 1};
  const std::vector<float> s = smooth_scales(a, w, 0.5);
  ASSERT_EQ(s.size(), 4u);
  EXPECT_FLOAT_EQ(s[0], 20.0f);  // sqrt(100) / sqrt(0.25)
  EXPECT_FLOAT_EQ(s[1], 1.0f);
  EXPECT_FLOAT_EQ(s[2], 1.0f);  // a dead channel
  EXPECT_FLOAT_EQ(s[3], 2.0f);
  // After migration both maxima of channel 0 are sqrt(100 · 0.25) = 5.
  EXPECT_FLOAT_EQ(a[0] / s[0], w[0] * s[0]);
  EXPECT_FLOAT_EQ(smooth_scales(a, w, 1.0)[0], 100.0f);
  EXPECT_FLOAT_EQ(smooth_scales(a, w, 0.0)[0], 4.0f);
  expect_error([&] { smooth_scales(a, w, 1.5); }, {"alpha is 1.5", "[0, 1]"});
  expect_error([&] { smooth_scales(a, std::vector<float>{1, 2}, 0.5); }, "4 activation maxima");
  expect_error([&] { smooth_scales(std::vector<float>{-1}, std::vector<float>{1}, 0.5); },
               "channel 0");
}

EXERCISE_TEST("quant.awq_search", AwqSearch, BeatsPlainRoundingWhenAFewInputsAreLarge) {
  Rng rng(1);
  const int rows = 16, cols = 64, tokens = 32;
  const std::vector<float> w = random_values(rows * cols, rng);
  std::vector<float> x = random_values(tokens * cols, rng);
  for (int t = 0; t < tokens; ++t)
    for (const int j : {3, 17, 40}) x[t * cols + j] *= 30;  // salient input channels
  const Scheme scheme{Bits::kInt4, Symmetry::kSymmetric, Granularity::kGroup, 32};
  const AwqSearch found = awq_search(w, rows, cols, x, tokens, scheme, 10);
  ASSERT_EQ(found.scales.size(), static_cast<std::size_t>(cols));
  EXPECT_GT(found.alpha, 0.0);
  EXPECT_LT(found.error, 0.9 * found.error_plain);
  EXPECT_GT(found.scales[17], found.scales[0]) << "a salient channel is scaled up";
  expect_error([&] { awq_search(w, rows, cols, x, tokens, scheme, 0); }, "grid of 0");
  expect_error([&] { awq_search(w, rows, 60, x, tokens, scheme, 4); }, "does not divide");
}

}  // namespace
}  // namespace book::quant
