// Scaffolding checks of chapter 14's quantiser (quant.h): the schemes that reach no exercise (INT8
// per tensor and per group symmetric, INT8 asymmetric at every granularity) round-trip within
// half a scale and keep zero exact, bytes and bits per weight are counted exactly, and every
// refusal of check_scheme, check_matrix, quantize and dequantize that happens before an exercise
// is reached. INT4 and per-channel symmetric INT8 go through exercises: quant_test grades them.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "chapters/14_quantization/quant.h"
#include "common/rng.h"
#include "common/testing/expect_error.h"

namespace book::quant {
namespace {

using book::testing::expect_error;

constexpr int kRows = 7, kCols = 384;  // 384 = 3 · 128: every group size below divides it

// Weights in [−3, 3) with exact zeros scattered in, an all-zero group (row 2, columns 0..127) and
// an all-positive row (row 4), which asymmetric schemes widen to include 0.
std::vector<float> test_weights(std::uint64_t seed) {
  Rng rng(seed);
  std::vector<float> w(kRows * kCols);
  for (float& x : w) x = static_cast<float>(rng.uniform(-3.0, 3.0));
  for (std::size_t i = 0; i < w.size(); i += 11) w[i] = 0;
  for (int c = 0; c < 128; ++c) w[2 * kCols + c] = 0;
  for (int c = 0; c < kCols; ++c) w[4 * kCols + c] = std::abs(w[4 * kCols + c]) + 0.5f;
  return w;
}

// The round trip's analytic bound: |x − s·(q − z)| <= s/2, with a few float ulps of slack for
// x / s and s · (q − z) each rounding once.
void expect_round_trip(const std::vector<float>& w, const QuantizedMatrix& q) {
  std::vector<float> back(w.size(), NAN);
  dequantize(q, back);
  for (int r = 0; r < q.rows; ++r)
    for (int c = 0; c < q.cols; ++c) {
      const float x = w[r * q.cols + c], y = back[r * q.cols + c];
      ASSERT_GE(q.q(r, c), qmin(q.scheme)) << q.scheme.name();
      ASSERT_LE(q.q(r, c), qmax(q.scheme)) << q.scheme.name();
      if (x == 0) {
        ASSERT_EQ(y, 0.0f) << q.scheme.name() << ": zero must come back exact at " << r << ", "
                           << c;
      }
      ASSERT_LE(std::abs(y - x), q.scale(r, c) / 2 * (1 + 1e-5f) + 1e-6f * std::abs(x))
          << q.scheme.name() << " row " << r << ", col " << c << ": " << x << " came back " << y;
    }
}

// Schemes whose quantize() path calls no exercise.
std::vector<Scheme> chapter_only_schemes() {
  std::vector<Scheme> out = {{Bits::kInt8, Symmetry::kSymmetric, Granularity::kPerTensor},
                             {Bits::kInt8, Symmetry::kAsymmetric, Granularity::kPerTensor},
                             {Bits::kInt8, Symmetry::kAsymmetric, Granularity::kPerChannel}};
  for (const int g : {32, 64, 128})
    for (const Symmetry s : {Symmetry::kSymmetric, Symmetry::kAsymmetric})
      out.push_back({Bits::kInt8, s, Granularity::kGroup, g});
  return out;
}

TEST(QuantChecks, Int8SchemesRoundTripWithinHalfAScaleAndKeepZero) {
  const std::vector<float> w = test_weights(14);
  for (const Scheme& scheme : chapter_only_schemes())
    expect_round_trip(w, quantize(w, kRows, kCols, scheme));
}

TEST(QuantChecks, BytesAndBitsPerWeightAreCountedExactly) {
  const std::vector<float> w = test_weights(2);
  const double n = kRows * kCols;
  for (const Scheme& scheme : chapter_only_schemes()) {
    const QuantizedMatrix q = quantize(w, kRows, kCols, scheme);
    const bool asym = scheme.symmetry == Symmetry::kAsymmetric;
    std::size_t scales = 1;
    if (scheme.granularity == Granularity::kPerChannel) scales = kRows;
    if (scheme.granularity == Granularity::kGroup) scales = kRows * (kCols / scheme.group_size);
    EXPECT_EQ(q.scales.size(), scales) << scheme.name();
    EXPECT_EQ(q.zeros.size(), asym ? scales : 0u) << scheme.name();
    EXPECT_EQ(q.bytes(), kRows * kCols + scales * (asym ? 5 : 4)) << scheme.name();
    EXPECT_DOUBLE_EQ(q.bits_per_weight(), 8 + 8.0 * scales * (asym ? 5 : 4) / n) << scheme.name();
  }
  // Worked numbers: INT8 g128 carries a 32-bit scale per 128 weights, 8.25 bits; asymmetric
  // adds an 8-bit zero point, 8.3125.
  EXPECT_DOUBLE_EQ(
      quantize(w, kRows, kCols, {Bits::kInt8, Symmetry::kSymmetric, Granularity::kGroup, 128})
          .bits_per_weight(),
      8.25);
  EXPECT_DOUBLE_EQ(
      quantize(w, kRows, kCols, {Bits::kInt8, Symmetry::kAsymmetric, Granularity::kGroup, 128})
          .bits_per_weight(),
      8.3125);
}

TEST(QuantChecks, AsymmetricUsesTheWholeRange) {
  // A row from 0.5 to 10.5 is widened to [0, 10.5]: s = 10.5 / 255, z = 0, its max is q = 255.
  std::vector<float> w(16);
  for (int c = 0; c < 16; ++c) w[c] = 0.5f + static_cast<float>(c) * 10.0f / 15.0f;
  const QuantizedMatrix q =
      quantize(w, 1, 16, {Bits::kInt8, Symmetry::kAsymmetric, Granularity::kPerChannel});
  EXPECT_FLOAT_EQ(q.scales[0], 10.5f / 255);
  EXPECT_EQ(q.zeros[0], 0);
  EXPECT_EQ(q.q(0, 15), 255);
}

TEST(QuantChecks, NamesAndRanges) {
  EXPECT_EQ((Scheme{Bits::kInt4, Symmetry::kSymmetric, Granularity::kGroup, 128}.name()),
            "int4 g128");
  EXPECT_EQ((Scheme{Bits::kInt8, Symmetry::kAsymmetric, Granularity::kPerTensor}.name()),
            "int8 per-tensor asym");
  EXPECT_EQ(qmax({Bits::kInt8}), 127);
  EXPECT_EQ(qmin({Bits::kInt8}), -127);
  EXPECT_EQ(qmax({Bits::kInt4}), 7);
  EXPECT_EQ(qmin({Bits::kInt4}), -7);
  EXPECT_EQ(qmax({Bits::kInt8, Symmetry::kAsymmetric}), 255);
  EXPECT_EQ(qmax({Bits::kInt4, Symmetry::kAsymmetric}), 15);
  EXPECT_EQ(qmin({Bits::kInt4, Symmetry::kAsymmetric}), 0);
}

TEST(QuantChecks, CheckSchemeRefusals) {
  const Scheme g128{Bits::kInt8, Symmetry::kSymmetric, Granularity::kGroup, 128};
  expect_error([&] { check_scheme(g128, 4, 96); }, {"group size 128", "row of 96"});
  expect_error(
      [&] {
        check_scheme({Bits::kInt8, Symmetry::kSymmetric, Granularity::kGroup, 0}, 4, 96);
      },
      "group size 0");
  expect_error(
      [&] {
        check_scheme({Bits::kInt4, Symmetry::kSymmetric}, 4, 33);
      },
      {"INT4", "even", "33"});
  expect_error([&] { check_scheme({Bits::kInt4, Symmetry::kAsymmetric}, 4, 33); }, "33");
  expect_error([&] { check_scheme(g128, 0, 128); }, {"0 × 128", ">= 1"});
  expect_error([&] { check_scheme({static_cast<Bits>(3)}, 1, 8); }, "3 bits");
  check_scheme(g128, 1, 256);  // fits
}

TEST(QuantChecks, QuantizeRefusesBeforeAnyExercise) {
  // Each of these is refused before quantize() reaches an exercise, INT4 and per-channel INT8
  // symmetric included.
  std::vector<float> w = test_weights(3);
  for (const Scheme scheme :
       {Scheme{Bits::kInt8, Symmetry::kSymmetric, Granularity::kPerChannel},
        Scheme{Bits::kInt4, Symmetry::kSymmetric, Granularity::kGroup, 32},
        Scheme{Bits::kInt8, Symmetry::kAsymmetric, Granularity::kGroup, 64}}) {
    expect_error([&] { quantize(std::span(w).first(100), kRows, kCols, scheme); },
                 {"needs 2688 values", "got 100"});
    std::vector<float> bad = w;
    bad[1000] = NAN;
    expect_error([&] { quantize(bad, kRows, kCols, scheme); }, {"weights[1000]", "nan"});
    bad[1000] = -std::numeric_limits<float>::infinity();
    expect_error([&] { quantize(bad, kRows, kCols, scheme); }, {"weights[1000]", "-inf"});
  }
  expect_error(
      [&] {
        quantize(w, kRows, kCols, {Bits::kInt8, Symmetry::kSymmetric, Granularity::kGroup, 100});
      },
      "does not divide");
  expect_error([&] { quantize(std::span(w).first(7 * 383), kRows, 383, {Bits::kInt4}); }, "even");
}

TEST(QuantChecks, CheckMatrixAndDequantizeRefusals) {
  const std::vector<float> w = test_weights(5);
  const QuantizedMatrix good =
      quantize(w, kRows, kCols, {Bits::kInt8, Symmetry::kAsymmetric, Granularity::kGroup, 64});
  check_matrix(good);
  QuantizedMatrix bad = good;
  bad.scales[3] = 0;
  expect_error([&] { check_matrix(bad); }, {"scale 3 is 0", "> 0"});
  bad.scales[3] = NAN;
  expect_error([&] { check_matrix(bad); }, {"scale 3", "nan"});
  bad = good;
  bad.scales[0] = -1;
  expect_error([&] { check_matrix(bad); }, "scale 0 is -1");
  bad = good;
  bad.data.pop_back();
  expect_error([&] { check_matrix(bad); }, {"2688 bytes", "2687"});
  bad = good;
  bad.zeros.clear();
  expect_error([&] { check_matrix(bad); }, {"42 zero points", "and 0"});
  bad = good;
  bad.scheme.group_size = 96;  // 384 / 96 = 4 groups a row, but 6 scales a row stored
  expect_error([&] { check_matrix(bad); }, "28 scales");
  bad = good;
  bad.scheme.bits = Bits::kInt4;  // an INT4 matrix needs half the bytes and zero points <= 15
  expect_error([&] { check_matrix(bad); }, "1344 bytes");
  std::vector<float> out(w.size() - 1);
  expect_error([&] { dequantize(good, out); }, {"2688 floats", "got 2687"});
  bad = good;
  bad.scales[5] = 0;
  std::vector<float> full(w.size());
  expect_error([&] { dequantize(bad, full); }, "scale 5 is 0");
}

TEST(QuantChecks, Int4ZeroPointAbove15IsRefused) {
  QuantizedMatrix m;
  m.scheme = {Bits::kInt4, Symmetry::kAsymmetric, Granularity::kPerTensor};
  m.rows = 2;
  m.cols = 4;
  m.data.assign(4, 0);
  m.scales = {1.0f};
  m.zeros = {16};
  expect_error([&] { check_matrix(m); }, {"zero point 0 is 16", "[0, 15]"});
  m.zeros = {15};
  check_matrix(m);
}

}  // namespace
}  // namespace book::quant
