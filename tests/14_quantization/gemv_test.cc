// The weight-only GEMV (chapters/14_quantization/gemv.h) on every path this CPU runs, forced one
// at a time: every scheme (INT8 and INT4, symmetric and asymmetric, per tensor, per channel, in
// groups), awkward shapes (rows 37, cols 38, 96, 160, 384), m from 1 to 17, against the
// dequantise-then-double reference within the FP32 bound of gemv_inputs.h, outputs poisoned
// first. Then the FP32 GEMV the same way, the layout's invariants, and every refusal.
#include "chapters/14_quantization/gemv.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "chapters/14_quantization/gemv_cuda_index.h"
#include "common/rng.h"
#include "common/testing/expect_error.h"
#include "tests/14_quantization/gemv_inputs.h"

namespace book::quant {
namespace {

using book::testing::expect_error;
using testing::random_quantized;
using testing::random_x;
using testing::reference_gemv;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

std::vector<GemvPath> paths_here() {
  std::vector<GemvPath> paths{GemvPath::kPlain};
  for (GemvPath p : {GemvPath::kAvx2, GemvPath::kAvx512})
    if (gemv_path_available(p)) paths.push_back(p);
  return paths;
}

Scheme scheme(Bits bits, Symmetry symmetry, Granularity granularity, int group = 128) {
  return {bits, symmetry, granularity, group};
}

void expect_matches(const QuantizedMatrix& w, GemvPath path, int m, int threads, Rng& rng) {
  const std::vector<float> x = random_x(static_cast<std::size_t>(m) * w.cols, rng);
  std::vector<float> y(static_cast<std::size_t>(m) * w.rows, kNaN);  // poisoned
  QuantizedGemv gemv(w, path, threads);
  ASSERT_EQ(gemv.path(), path);
  gemv.run(x, m, y);
  const testing::Reference ref = reference_gemv(w, x, m);
  for (std::size_t i = 0; i < y.size(); ++i)
    ASSERT_NEAR(y[i], ref.y[i], ref.bound[i])
        << w.scheme.name() << " " << w.rows << " × " << w.cols << ", path " << gemv_path_name(path)
        << ", m " << m << ", threads " << threads << ", output " << i;
}

TEST(QuantizedGemv, EverySchemeOnEveryPathMatchesTheDequantisedReference) {
  Rng rng(1401);
  const std::vector<Scheme> schemes{
      scheme(Bits::kInt8, Symmetry::kSymmetric, Granularity::kPerChannel),
      scheme(Bits::kInt8, Symmetry::kSymmetric, Granularity::kPerTensor),
      scheme(Bits::kInt8, Symmetry::kSymmetric, Granularity::kGroup, 32),
      scheme(Bits::kInt8, Symmetry::kAsymmetric, Granularity::kPerChannel),
      scheme(Bits::kInt8, Symmetry::kAsymmetric, Granularity::kGroup, 32),
      scheme(Bits::kInt4, Symmetry::kSymmetric, Granularity::kGroup, 32),
      scheme(Bits::kInt4, Symmetry::kAsymmetric, Granularity::kGroup, 32),
      scheme(Bits::kInt4, Symmetry::kSymmetric, Granularity::kPerChannel),
      scheme(Bits::kInt4, Symmetry::kAsymmetric, Granularity::kPerTensor),
  };
  for (GemvPath path : paths_here())
    for (const Scheme& s : schemes)
      for (const int cols : {96, 160, 38})  // 38: a row padded to 64 (per channel, per tensor)
        for (const int rows : {37, 1, 6}) {
          if (s.granularity == Granularity::kGroup && cols % s.group_size != 0) continue;
          const QuantizedMatrix w = random_quantized(s, rows, cols, rng);
          for (const int m : {1, 2, 4, 5, 16, 17}) expect_matches(w, path, m, 2, rng);
        }
}

TEST(QuantizedGemv, GroupsOf64And128OnEveryPath) {
  Rng rng(1402);
  for (GemvPath path : paths_here())
    for (const Bits bits : {Bits::kInt8, Bits::kInt4})
      for (const Symmetry sym : {Symmetry::kSymmetric, Symmetry::kAsymmetric})
        for (const int group : {64, 128}) {
          const QuantizedMatrix w =
              random_quantized(scheme(bits, sym, Granularity::kGroup, group), 37, 384, rng);
          for (const int m : {1, 3, 8}) expect_matches(w, path, m, 3, rng);
        }
}

TEST(QuantizedGemv, ThreadCountDoesNotChangeABit) {
  Rng rng(1403);
  const QuantizedMatrix w = random_quantized(
      scheme(Bits::kInt4, Symmetry::kAsymmetric, Granularity::kGroup, 64), 75, 256, rng);
  for (GemvPath path : paths_here())
    for (const int m : {1, 6}) {
      const std::vector<float> x = random_x(static_cast<std::size_t>(m) * w.cols, rng);
      std::vector<float> one(static_cast<std::size_t>(m) * w.rows, kNaN), three(one);
      QuantizedGemv(w, path, 1).run(x, m, one);
      QuantizedGemv(w, path, 3).run(x, m, three);
      for (std::size_t i = 0; i < one.size(); ++i)
        ASSERT_EQ(one[i], three[i]) << gemv_path_name(path) << " output " << i;
    }
}

TEST(QuantizedGemv, GroupsThatAreNotBlocksRunPlainOrAreRefused) {
  Rng rng(1404);
  const QuantizedMatrix w = random_quantized(
      scheme(Bits::kInt4, Symmetry::kAsymmetric, Granularity::kGroup, 6), 9, 96, rng);
  QuantizedGemv automatic(w);
  EXPECT_EQ(automatic.path(), GemvPath::kPlain);
  expect_matches(w, GemvPath::kPlain, 3, 2, rng);
  for (GemvPath path : paths_here())
    if (path != GemvPath::kPlain)
      expect_error([&] { QuantizedGemv gemv(w, path); }, {"groups of 6", "multiple of 32"});
}

TEST(QuantizedGemv, BytesReadCountsIntegersScalesZerosAndX) {
  Rng rng(1405);
  const QuantizedMatrix w = random_quantized(
      scheme(Bits::kInt4, Symmetry::kAsymmetric, Granularity::kGroup, 128), 8, 256, rng);
  const QuantizedGemv gemv(w);
  EXPECT_EQ(gemv.bytes_read(1), w.bytes() + 256 * 4);
  EXPECT_EQ(gemv.bytes_read(4), w.bytes() + 4 * 256 * 4);
  const QuantizedMatrix padded = random_quantized(
      scheme(Bits::kInt8, Symmetry::kSymmetric, Granularity::kPerChannel), 3, 40, rng);
  EXPECT_EQ(QuantizedGemv(padded).bytes_read(1), 3 * 64 + 3 * 4 + 40 * 4u)
      << "rows padded to 64 values are read whole";
}

TEST(Fp32Gemv, MatchesDoubleOnEveryPath) {
  Rng rng(1406);
  for (GemvPath path : paths_here())
    for (const int cols : {96, 160, 45, 7})
      for (const int rows : {37, 1}) {
        const std::vector<float> w = random_x(static_cast<std::size_t>(rows) * cols, rng);
        Fp32Gemv gemv(w, rows, cols, path, 2);
        for (const int m : {1, 4, 5}) {
          const std::vector<float> x = random_x(static_cast<std::size_t>(m) * cols, rng);
          std::vector<float> y(static_cast<std::size_t>(m) * rows, kNaN);
          gemv.run(x, m, y);
          for (int t = 0; t < m; ++t)
            for (int r = 0; r < rows; ++r) {
              double sum = 0, magnitude = 0;
              for (int c = 0; c < cols; ++c) {
                const double p = static_cast<double>(w[r * cols + c]) * x[t * cols + c];
                sum += p;
                magnitude += std::abs(p);
              }
              ASSERT_NEAR(y[t * rows + r], sum, 2.0 * (cols + 1) * FLT_EPSILON * magnitude)
                  << gemv_path_name(path) << " " << rows << " × " << cols << " m " << m;
            }
        }
      }
}

TEST(GemvRefusals, SizesMatricesPathsAndThreads) {
  Rng rng(1407);
  const QuantizedMatrix w = random_quantized(
      scheme(Bits::kInt8, Symmetry::kSymmetric, Granularity::kPerChannel), 5, 64, rng);
  QuantizedGemv gemv(w);
  std::vector<float> x(64), y(5);
  expect_error([&] { gemv.run(std::vector<float>(63), 1, y); }, {"x of 64", "got 63"});
  std::vector<float> short_y(4);
  expect_error([&] { gemv.run(x, 1, short_y); }, {"y of 5", "and 4"});
  expect_error([&] { gemv.run(x, 0, y); }, {"m = 0"});
  expect_error([&] { gemv.run(x, 2, y); }, {"x of 128"});
  QuantizedMatrix broken = w;
  broken.scales.pop_back();
  expect_error([&] { QuantizedGemv bad(broken); }, {"5 scales", "4"});
  expect_error([&] { QuantizedGemv bad(w, GemvPath::kAuto, -1); }, {"-1 threads"});
  if (!gemv_path_available(GemvPath::kAvx512))
    expect_error([&] { QuantizedGemv bad(w, GemvPath::kAvx512); }, {"avx512 path", "lacks"});
  const std::vector<float> dense(5 * 64);
  expect_error([&] { Fp32Gemv bad(dense, 5, 63); }, {"315 floats", "got 320"});
  expect_error([&] { Fp32Gemv bad(dense, 0, 64); }, {"0 × 64"});
  Fp32Gemv fp32(dense, 5, 64);
  expect_error([&] { fp32.run(std::vector<float>(65), 1, y); }, {"x of 64", "got 65"});
}

// The CUDA kernel's index map, checked here where there is no GPU: for every value of every
// scheme, the byte, nibble and scale it names hold what QuantizedMatrix says is at (row, col).
TEST(GpuIndexMap, NamesTheByteNibbleAndScaleOfEveryValue) {
  Rng rng(1408);
  for (const Bits bits : {Bits::kInt8, Bits::kInt4})
    for (const Symmetry sym : {Symmetry::kSymmetric, Symmetry::kAsymmetric})
      for (const Granularity gran :
           {Granularity::kPerTensor, Granularity::kPerChannel, Granularity::kGroup})
        for (const int group : {6, 32}) {
          const QuantizedMatrix w = random_quantized(scheme(bits, sym, gran, group), 7, 96, rng);
          gpu::GemvDims d;
          d.rows = w.rows;
          d.cols = w.cols;
          d.int4 = bits == Bits::kInt4;
          d.group_cols = w.group_cols();
          d.scale_stride = w.groups_per_row();
          const int offset = d.int4 && sym == Symmetry::kSymmetric ? 8 : 0;
          for (int r = 0; r < w.rows; ++r)
            for (int c = 0; c < w.cols; ++c) {
              const gpu::WeightIndex at = gpu::weight_index(d, r, c);
              int stored = (w.data[at.byte] >> at.shift) & (d.int4 ? 0x0f : 0xff);
              if (!d.int4 && sym == Symmetry::kSymmetric) stored = static_cast<std::int8_t>(stored);
              ASSERT_EQ(stored - offset, w.q(r, c)) << w.scheme.name() << " at " << r << ", " << c;
              ASSERT_EQ(w.scales[at.scale], w.scale(r, c)) << w.scheme.name();
              if (!w.zeros.empty()) ASSERT_EQ(w.zeros[at.scale], w.zero(r, c)) << w.scheme.name();
              if (c % (d.int4 ? 2 : 1) == 0)
                ASSERT_EQ(gpu::first_col_of_byte(d, at.byte - r * gpu::gemv_row_bytes(d)), c);
            }
          EXPECT_EQ(gpu::chunk_in_one_group(d), d.group_cols % (d.int4 ? 32 : 16) == 0);
        }
}

}  // namespace
}  // namespace book::quant
