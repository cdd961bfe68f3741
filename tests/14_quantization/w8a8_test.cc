// The W8A8 GEMM (chapters/14_quantization/w8a8.h): every kernel this CPU runs gives int32 sums
// equal to the plain reference's, bit for bit, on awkward sizes, extreme integers and 1 or 2
// threads; the float outputs are within w8a8.h's stated bound of a double-precision product of
// the dequantised operands; the activation quantiser keeps its s/2 bound; and the refusals.
// Weights are made by hand (random integers and scales), so no exercise is reached.
#include "chapters/14_quantization/w8a8.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "common/rng.h"
#include "common/testing/expect_error.h"

namespace book::quant {
namespace {

using book::testing::expect_error;

QuantizedMatrix random_weights(int rows, int cols, Rng& rng, bool extreme = false) {
  QuantizedMatrix w;
  w.rows = rows;
  w.cols = cols;
  w.data.resize(static_cast<std::size_t>(rows) * cols);
  for (auto& b : w.data) {
    const auto q = extreme ? (rng.uniform() < 0.5 ? -127 : 127) : rng.uniform_int(-127, 127);
    b = static_cast<std::uint8_t>(static_cast<std::int8_t>(q));
  }
  for (int r = 0; r < rows; ++r) w.scales.push_back(static_cast<float>(rng.uniform(1e-3, 1e-1)));
  return w;
}

std::vector<float> random_activations(int tokens, int cols, Rng& rng) {
  std::vector<float> x(static_cast<std::size_t>(tokens) * cols);
  for (float& v : x) v = static_cast<float>(rng.uniform(-4.0, 4.0));
  return x;
}

std::vector<W8A8Kernel> kernels_here() {
  std::vector<W8A8Kernel> out;
  for (const W8A8Kernel k : {W8A8Kernel::kReference, W8A8Kernel::kAvx2, W8A8Kernel::kAvx512Vnni})
    if (w8a8_kernel_available(k)) out.push_back(k);
  return out;
}

TEST(W8A8, KernelSumsEqualTheReferenceExactly) {
  Rng rng(81);
  for (const int m : {1, 5, 7, 13})
    for (const int n : {1, 17, 63, 65, 130})
      for (const int k : {1, 3, 5, 63, 257, 600}) {
        const QuantizedMatrix qw = random_weights(n, k, rng);
        W8A8Activations x;
        quantize_activations(random_activations(m, k, rng), m, k, x);
        std::vector<std::int32_t> want(static_cast<std::size_t>(m) * n);
        w8a8_accumulate_reference(x, W8A8Weights(qw, W8A8Kernel::kReference), want);
        for (const W8A8Kernel kernel : kernels_here()) {
          const W8A8Weights w(qw, kernel);
          for (const int threads : {1, 2}) {
            std::vector<std::int32_t> got(want.size(), std::numeric_limits<std::int32_t>::min());
            w8a8_accumulate(x, w, got, threads);
            ASSERT_EQ(got, want) << w8a8_kernel_name(kernel) << " m " << m << " n " << n << " k "
                                 << k << " threads " << threads;
          }
        }
      }
}

TEST(W8A8, ExtremeIntegersNeitherSaturateNorOverflow) {
  // ±127 everywhere and a long reduction: vpmaddubsw would saturate int16 here, and the VNNI
  // kernel's unsigned activations reach 255.
  Rng rng(82);
  const int m = 7, n = 70, k = 4099;
  const QuantizedMatrix qw = random_weights(n, k, rng, true);
  W8A8Activations x;
  x.tokens = m;
  x.cols = k;
  x.scales.assign(m, 1.0f);
  for (int i = 0; i < m * k; ++i) x.q.push_back(static_cast<std::int8_t>(i % 3 == 0 ? 127 : -127));
  for (int i = 0; i < k; ++i) x.q[i] = -127;  // token 0 all −127
  std::vector<std::int32_t> want(static_cast<std::size_t>(m) * n);
  w8a8_accumulate_reference(x, W8A8Weights(qw, W8A8Kernel::kReference), want);
  for (const W8A8Kernel kernel : kernels_here()) {
    std::vector<std::int32_t> got(want.size(), -1);
    w8a8_accumulate(x, W8A8Weights(qw, kernel), got);
    ASSERT_EQ(got, want) << w8a8_kernel_name(kernel);
  }
}

TEST(W8A8, OutputsWithinTheStatedBoundOfTheDequantisedProduct) {
  Rng rng(83);
  const int m = 9, n = 77, k = 333;
  const QuantizedMatrix qw = random_weights(n, k, rng);
  std::vector<float> bias(n);
  for (float& b : bias) b = static_cast<float>(rng.uniform(-1.0, 1.0));
  const std::vector<float> xf = random_activations(m, k, rng);
  for (const W8A8Kernel kernel : kernels_here()) {
    const W8A8Weights w(qw, kernel);
    W8A8Activations x;
    std::vector<float> y(static_cast<std::size_t>(m) * n, NAN);
    w8a8_linear(xf, m, w, bias, y, x);
    for (int t = 0; t < m; ++t)
      for (int j = 0; j < n; ++j) {
        double product = 0;  // Σ (s_x q_x)(s_w q_w) in double: the dequantised operands' product
        for (int c = 0; c < k; ++c)
          product += double{x.scales[t]} * x.q[t * k + c] * double{qw.scales[j]} * qw.q(j, c);
        const double want = product + bias[j];
        const double bound = 4 * 0x1p-24 * std::abs(product) + 0x1p-24 * std::abs(want) + 1e-30;
        ASSERT_NEAR(y[t * n + j], want, bound) << w8a8_kernel_name(kernel) << " " << t << ", " << j;
      }
    std::vector<float> no_bias(y.size(), NAN);
    w8a8_gemm(x, w, {}, no_bias, 1);
    for (std::size_t i = 0; i < y.size(); ++i) ASSERT_FALSE(std::isnan(no_bias[i])) << i;
  }
}

TEST(W8A8, ActivationsQuantisePerTokenWithinHalfAScale) {
  Rng rng(84);
  const int m = 5, k = 99;
  std::vector<float> xf = random_activations(m, k, rng);
  for (int c = 0; c < k; ++c) xf[2 * k + c] = 0;  // an all-zero token
  xf[3 * k + 10] = -50;
  W8A8Activations x;
  quantize_activations(xf, m, k, x);
  EXPECT_EQ(x.scales[2], 1.0f);
  EXPECT_FLOAT_EQ(x.scales[3], 50.0f / 127);
  EXPECT_EQ(x.q[3 * k + 10], -127);
  for (int t = 0; t < m; ++t)
    for (int c = 0; c < k; ++c) {
      const float v = xf[t * k + c];
      ASSERT_LE(std::abs(x.scales[t] * x.q[t * k + c] - v), x.scales[t] / 2 * (1 + 1e-5f));
      if (v == 0) {
        ASSERT_EQ(x.q[t * k + c], 0);
      }
    }
}

TEST(W8A8, ActivationsRoundLikeLroundTiesIncluded) {
  // A token whose largest magnitude is 127 has scale 1, so k + 0.5 is an exact tie: std::lround
  // goes away from zero, and so must the vector rounding.
  const int k = 77;
  std::vector<float> xf(2 * k);
  for (int c = 0; c < k; ++c) xf[c] = static_cast<float>(c % 2 ? c - 38.5 : -(c % 40) - 0.5);
  xf[5] = 127;
  Rng rng(86);
  for (int c = k; c < 2 * k; ++c) xf[c] = static_cast<float>(rng.uniform(-3.0, 3.0));
  W8A8Activations x;
  quantize_activations(xf, 2, k, x);
  ASSERT_EQ(x.scales[0], 1.0f);
  for (int t = 0; t < 2; ++t)
    for (int c = 0; c < k; ++c)
      ASSERT_EQ(x.q[t * k + c], std::lround(xf[t * k + c] / x.scales[t])) << t << ", " << c;
}

TEST(W8A8, Refusals) {
  Rng rng(85);
  const QuantizedMatrix qw = random_weights(8, 16, rng);
  const W8A8Weights w(qw);
  W8A8Activations x;
  const std::vector<float> xf = random_activations(3, 16, rng);
  expect_error([&] { quantize_activations(xf, 3, 15, x); }, {"need 45", "got 48"});
  expect_error([&] { quantize_activations(xf, 0, 16, x); }, "0 tokens");
  expect_error([&] { quantize_activations(xf, 1, 70000, x); }, "70000 features");
  std::vector<float> bad = xf;
  bad[7] = INFINITY;
  expect_error([&] { quantize_activations(bad, 3, 16, x); }, {"activations[7]", "inf"});
  quantize_activations(xf, 3, 16, x);
  std::vector<std::int32_t> acc(23);
  expect_error([&] { w8a8_accumulate(x, w, acc); }, {"need 24 sums", "got 23"});
  std::vector<float> y(24);
  expect_error([&] { w8a8_gemm(x, w, std::vector<float>(7), y); }, {"bias needs 8", "got 7"});
  expect_error([&] { w8a8_gemm(x, w, {}, std::span(y).first(20)); }, "need 24 outputs");
  expect_error([&] { w8a8_gemm(x, w, {}, y, -1); }, "-1 threads");
  W8A8Activations other;
  quantize_activations(random_activations(3, 12, rng), 3, 12, other);
  expect_error([&] { w8a8_gemm(other, w, {}, y); }, {"12 features", "16 input features"});
  expect_error([&] { w8a8_linear(xf, 5, w, {}, y, x); }, {"48 activations", "5 tokens"});
  QuantizedMatrix group = qw;
  group.scheme = {Bits::kInt8, Symmetry::kSymmetric, Granularity::kGroup, 8};
  group.scales.resize(16, 1.0f);
  expect_error([&] { W8A8Weights{group}; }, {"one scale per output channel", "int8 g8"});
  QuantizedMatrix zero_scale = qw;
  zero_scale.scales[2] = 0;
  expect_error([&] { W8A8Weights{zero_scale}; }, "scale 2 is 0");
  QuantizedMatrix wide = qw;
  wide.cols = 70000;
  wide.rows = 1;
  wide.data.assign(70000, 0);
  wide.scales.assign(1, 1.0f);
  expect_error([&] { W8A8Weights{wide}; }, {"70000 input features", "65536"});
  for (const W8A8Kernel k : {W8A8Kernel::kAvx2, W8A8Kernel::kAvx512Vnni})
    if (!w8a8_kernel_available(k)) expect_error([&] { W8A8Weights(qw, k); }, "does not run");
}

}  // namespace
}  // namespace book::quant
