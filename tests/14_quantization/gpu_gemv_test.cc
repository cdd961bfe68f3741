// The CUDA weight-only GEMV (chapters/14_quantization/gemv_cuda.h) against the dequantise-then-
// double reference of gemv_inputs.h: every scheme, awkward shapes (rows 37, cols 38, 96, 160,
// 384: rows of bytes that are and are not multiples of 16, groups of 6 that split a chunk), m
// from 1 to 17, outputs poisoned on the device first; cuBLAS's FP32 peer against double too; the
// refusals. Skips, saying why, without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "chapters/14_quantization/gemv_cuda.h"
#include "common/rng.h"
#include "common/testing/expect_error.h"
#include "common/testing/gpu.h"
#include "tests/14_quantization/gemv_inputs.h"

namespace book::quant {
namespace {

using book::testing::expect_error;
using testing::random_quantized;
using testing::random_x;
using testing::reference_gemv;

TEST(GpuQuantizedGemv, EverySchemeMatchesTheDequantisedReference) {
  BOOK_REQUIRE_GPU();
  Rng rng(1431);
  const std::vector<Scheme> schemes{
      {Bits::kInt8, Symmetry::kSymmetric, Granularity::kPerChannel, 128},
      {Bits::kInt8, Symmetry::kSymmetric, Granularity::kPerTensor, 128},
      {Bits::kInt8, Symmetry::kSymmetric, Granularity::kGroup, 32},
      {Bits::kInt8, Symmetry::kAsymmetric, Granularity::kGroup, 32},
      {Bits::kInt4, Symmetry::kSymmetric, Granularity::kGroup, 32},
      {Bits::kInt4, Symmetry::kAsymmetric, Granularity::kGroup, 32},
      {Bits::kInt4, Symmetry::kSymmetric, Granularity::kGroup, 6},
      {Bits::kInt4, Symmetry::kAsymmetric, Granularity::kPerChannel, 128},
  };
  for (const Scheme& s : schemes)
    for (const int cols : {96, 160, 38, 384})
      for (const int rows : {37, 1}) {
        if (s.granularity == Granularity::kGroup && cols % s.group_size != 0) continue;
        const QuantizedMatrix w = random_quantized(s, rows, cols, rng);
        GpuQuantizedGemv gemv(w);
        for (const int m : {1, 2, 5, 8, 17}) {
          const std::vector<float> x = random_x(static_cast<std::size_t>(m) * cols, rng);
          std::vector<float> y(static_cast<std::size_t>(m) * rows);
          gemv.run(x, m, y);
          const testing::Reference ref = reference_gemv(w, x, m);
          for (std::size_t i = 0; i < y.size(); ++i)
            ASSERT_NEAR(y[i], ref.y[i], ref.bound[i])
                << s.name() << " " << rows << " × " << cols << " m " << m << " output " << i;
        }
      }
}

TEST(GpuCublasGemv, Fp32AndFp16PeersMatchDouble) {
  BOOK_REQUIRE_GPU();
  Rng rng(1432);
  const int rows = 37, cols = 160;
  const std::vector<float> w = random_x(static_cast<std::size_t>(rows) * cols, rng);
  for (const bool fp16 : {false, true}) {
    GpuCublasGemv peer(w, rows, cols, fp16);
    for (const int m : {1, 4}) {
      const std::vector<float> x = random_x(static_cast<std::size_t>(m) * cols, rng);
      std::vector<float> y(static_cast<std::size_t>(m) * rows);
      peer.run(x, m, y);
      for (int t = 0; t < m; ++t)
        for (int r = 0; r < rows; ++r) {
          double sum = 0, magnitude = 0;
          for (int c = 0; c < cols; ++c) {
            const double p = static_cast<double>(w[r * cols + c]) * x[t * cols + c];
            sum += p;
            magnitude += std::abs(p);
          }
          // FP16 rounds each weight and input to 11 bits: 2·2^-11 relative per product.
          const double bound = (fp16 ? 2e-3 : 2.0 * (cols + 1) * 1.2e-7) * magnitude;
          ASSERT_NEAR(y[t * rows + r], sum, bound) << (fp16 ? "FP16" : "FP32") << " m " << m;
        }
    }
  }
}

TEST(GpuGemvRefusals, SizesAndMatrices) {
  BOOK_REQUIRE_GPU();
  Rng rng(1433);
  QuantizedMatrix w =
      random_quantized({Bits::kInt4, Symmetry::kSymmetric, Granularity::kGroup, 32}, 5, 64, rng);
  GpuQuantizedGemv gemv(w);
  std::vector<float> x(64), y(5), short_y(4);
  expect_error([&] { gemv.run(std::vector<float>(63), 1, y); }, {"x of 64", "got 63"});
  expect_error([&] { gemv.run(x, 1, short_y); }, {"y of 5", "and 4"});
  expect_error([&] { gemv.run(x, 0, y); }, {"m = 0"});
  w.scales.pop_back();
  expect_error([&] { GpuQuantizedGemv bad(w); }, {"10 scales", "9"});
  expect_error([&] { GpuCublasGemv bad(x, 5, 64, false); }, {"320 floats", "got 64"});
}

}  // namespace
}  // namespace book::quant
