// Issue 19: sgemm says it has BLAS semantics, so it follows reference BLAS where the two differed:
// m or n = 0 returns at once, k = 0 or alpha = 0 gives C = beta * C without reading A or B (NaN
// and Inf there used to become NaN in C), C sharing memory with A or B is refused (in place it
// was silently wrong once k spans more than one block: n = 513 gave errors of 20), and a
// Transpose that is neither kNo nor kYes is refused instead of read as kNo.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <vector>

#include "chapters/01_gemm_cpu/sgemm.h"
#include "common/testing/expect_error.h"
#include "tests/01_gemm_cpu/checking.h"

namespace book::gemm {
namespace {

using book::testing::expect_error;
using testing::random_matrix;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr Transpose kNo = Transpose::kNo, kYes = Transpose::kYes;

bool same_bits(const std::vector<float>& x, const std::vector<float>& y) {
  return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(float)) == 0;
}

TEST(SgemmBlas, AnEmptyCReturnsAtOnceTouchingNothing) {
  Rng rng(19);
  const auto c0 = random_matrix(rng, 5, 7);
  for (const auto& [m, n] : {std::pair{0, 7}, std::pair{5, 0}, std::pair{0, 0}}) {
    auto c = c0;
    sgemm(kNo, kNo, m, n, 3, 1.0f, nullptr, 3, nullptr, 7, 0.0f, c.data(), 7);
    EXPECT_TRUE(same_bits(c, c0)) << "m=" << m << " n=" << n << " wrote into C";
  }
}

// k = 0 and alpha = 0: C = beta * C exactly, with A and B not read (null, or full of NaN and Inf).
TEST(SgemmBlas, AZeroProductScalesCWithoutReadingAOrB) {
  const int m = 37, n = 29, k = 53, ldc = n + 3;
  Rng rng(1919);
  const auto c0 = random_matrix(rng, m, ldc);
  std::vector<float> poison_a(static_cast<std::size_t>(m) * k), poison_b(std::size_t(k) * n);
  for (std::size_t i = 0; i < poison_a.size(); ++i) poison_a[i] = i % 2 ? kNaN : -kInf;
  for (std::size_t i = 0; i < poison_b.size(); ++i) poison_b[i] = i % 3 ? kInf : kNaN;
  for (const float beta : {0.75f, 1.0f, 0.0f, -2.5f}) {
    for (const bool k_zero : {true, false}) {
      auto c = c0;
      if (beta == 0)  // beta == 0 does not read C: NaN there must not survive
        for (int i = 0; i < m; ++i) c[std::size_t(i) * ldc] = kNaN;
      if (k_zero)
        sgemm(kNo, kNo, m, n, 0, 1.5f, nullptr, 1, nullptr, n, beta, c.data(), ldc);
      else
        sgemm(kNo, kYes, m, n, k, 0.0f, poison_a.data(), k, poison_b.data(), k, beta, c.data(),
              ldc);
      for (int i = 0; i < m; ++i)
        for (int j = 0; j < ldc; ++j) {
          const std::size_t at = std::size_t(i) * ldc + j;
          const float expected = j >= n ? c0[at] : beta == 0 ? 0.0f : beta * c0[at];
          ASSERT_EQ(c[at], expected)
              << (k_zero ? "k=0" : "alpha=0 with NaN/Inf in A and B") << ", beta=" << beta << ", C("
              << i << "," << j << ") was " << c0[at] << (j >= n ? " (padding)" : "");
        }
    }
  }
}

TEST(SgemmBlas, CSharingMemoryWithAOrBIsRefused) {
  // In place, C = A * B with n = 513: k spans more than one block, which was silently wrong.
  const int n = 513;
  Rng rng(513);
  auto a = random_matrix(rng, n, n), b = random_matrix(rng, n, n);
  const auto a0 = a;
  expect_error(
      [&] { sgemm(kNo, kNo, n, n, n, 1, a.data(), n, b.data(), n, 0, a.data(), n); },
      {"sgemm: C (m×n = 513×513, ldc=513) overlaps A in memory", "write C into its own buffer"});
  EXPECT_TRUE(same_bits(a, a0)) << "a refused call wrote into C";
  // C's last row is B's first: a partial overlap counts too.
  std::vector<float> shared(std::size_t(8) * 4 + std::size_t(3) * 4);
  expect_error(
      [&] { sgemm(kNo, kNo, 8, 4, 3, 1, a.data(), 3, shared.data() + 28, 4, 0, shared.data(), 4); },
      "sgemm: C (m×n = 8×4, ldc=4) overlaps B in memory");
  expect_error(
      [&] {
        sgemm(kYes, kNo, 4, 4, 4, 1, shared.data() + 12, 4, b.data(), 4, 1, shared.data(), 4);
      },
      "overlaps A in memory");
  // Side by side in one buffer, not overlapping: accepted, and right.
  std::vector<float> one(3 * 2 + 2 * 2 + 3 * 2);
  const float av[] = {1, 2, 3, 4, 5, 6}, bv[] = {1, 0, 0, 1};  // A is 3×2, B the 2×2 identity
  std::memcpy(one.data(), av, sizeof av);
  std::memcpy(one.data() + 6, bv, sizeof bv);
  sgemm(kNo, kNo, 3, 2, 2, 2.0f, one.data(), 2, one.data() + 6, 2, 0, one.data() + 10, 2);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(one[10 + i], 2 * av[i]) << "C = 2 * A * I, element " << i;
}

TEST(SgemmBlas, MatricesInterleavedInOnePaddedBufferAreAcceptedAndRight) {
  // One 40×24 buffer (ld 24): A (40×7) in columns 0-6, B^T (8×7, rows 0-7) in columns 7-13 and
  // C (40×8) in columns 16-23: C = A·B with m = 40, k = 7, n = 8.
  // Their spans overlap; no element is shared, so sgemm must accept it and be right.
  const int m = 40, n = 8, k = 7, ld = 24;
  Rng rng(2411);
  std::vector<float> buffer = random_matrix(rng, m, ld);
  float* a = buffer.data();
  float* bt = buffer.data() + 7;
  float* c = buffer.data() + 16;
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) c[std::size_t(i) * ld + j] = kNaN;
  const auto before = buffer;
  sgemm(kNo, kYes, m, n, k, 1, a, ld, bt, ld, 0, c, ld);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < ld; ++j) {
      const std::size_t at = std::size_t(i) * ld + j;
      if (j < 16) {
        ASSERT_EQ(buffer[at], before[at]) << "sgemm wrote outside C, at row " << i << " col " << j;
        continue;
      }
      double expected = 0;
      for (int p = 0; p < k; ++p)
        expected += double(before[std::size_t(i) * ld + p]) *
                    double(before[std::size_t(j - 16) * ld + 7 + p]);
      ASSERT_NEAR(buffer[at], expected, 1e-4) << "C(" << i << "," << j - 16 << ")";
    }
  // C moved to columns 13-20 shares B^T's column 13 in rows 0-7: refused. (Columns 14-21
  // would share nothing, and are accepted above for 16-23 by the same exact check.)
  expect_error([&] { sgemm(kNo, kYes, m, n, k, 1, a, ld, bt, ld, 0, buffer.data() + 13, ld); },
               "overlaps B in memory");
}

TEST(SgemmBlas, ATransposeOutOfRangeAndNegativeSizesAreRefused) {
  std::vector<float> a(16, 1.0f), b(16, 1.0f), c(16, kNaN);
  const auto bad = static_cast<Transpose>(2);
  expect_error([&] { sgemm(bad, kNo, 4, 4, 4, 1, a.data(), 4, b.data(), 4, 0, c.data(), 4); },
               {"a Transpose must be kNo or kYes, got the value 2", "trans_a=2, trans_b=0"});
  expect_error([&] { sgemm(kNo, bad, 4, 4, 4, 1, a.data(), 4, b.data(), 4, 0, c.data(), 4); },
               "trans_a=0, trans_b=2");
  expect_error([&] { sgemm(kNo, kNo, 4, 4, -1, 1, a.data(), 4, b.data(), 4, 0, c.data(), 4); },
               "sizes must not be negative, got m=4 n=4 k=-1");
  expect_error([&] { sgemm(kNo, kNo, 4, 4, 0, 1, a.data(), 4, b.data(), 4, 0, nullptr, 4); },
               "C is null but m×n = 4×4");
  expect_error([&] { sgemm(kNo, kNo, 4, 4, 4, 0, a.data(), 4, b.data(), 4, 0, c.data(), 3); },
               "ldc=3 is shorter than a row of C (n=4)");
}

}  // namespace
}  // namespace book::gemm
