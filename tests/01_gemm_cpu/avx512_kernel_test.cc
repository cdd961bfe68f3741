// Graded test of gemm.08 on its own: the 12×32 AVX-512 micro-kernel on packed panels, against a
// double-precision reference, with alpha and beta, any depth, and a C that is padded, unaligned
// and poisoned. (rungs_test.cc runs rung 8 as a whole.) Skips on CPUs without AVX-512F, where the
// kernel cannot run and rung 8 runs rung 7's AVX2 kernel instead.
#include <limits>
#include <sstream>
#include <vector>

#include "chapters/01_gemm_cpu/gemm.h"
#include "common/buffer.h"
#include "common/testing/exercise.h"
#include "tests/01_gemm_cpu/checking.h"

namespace book::gemm {
namespace {

constexpr int kMr = 12, kNr = 32;

void check_kernel(int kc, float alpha, float beta, int ldc, int c_offset, Rng& rng) {
  AlignedBuffer<float> a(static_cast<std::size_t>(kMr) * kc), b(static_cast<std::size_t>(kNr) * kc);
  fill_uniform<float>(a.span(), rng);
  fill_uniform<float>(b.span(), rng);
  // C: kMr rows of ldc floats starting `c_offset` floats into the buffer (so not 64-byte
  // aligned), the sentinel around the tile, NaN in it when beta == 0 (C must not be read).
  std::vector<float> c0(static_cast<std::size_t>(kMr + 1) * ldc + c_offset,
                        testing::kPaddingSentinel);
  for (int i = 0; i < kMr; ++i)
    for (int j = 0; j < kNr; ++j)
      c0[c_offset + i * ldc + j] = beta == 0.0f ? std::numeric_limits<float>::quiet_NaN()
                                                : static_cast<float>(rng.uniform(-1, 1));
  auto c = c0;
  kernel_12x32_avx512(kc, a.data(), b.data(), c.data() + c_offset, ldc, alpha, beta);
  std::ostringstream what;
  what << "kernel_12x32_avx512(kc=" << kc << ", alpha=" << alpha << ", beta=" << beta
       << ", ldc=" << ldc << ", C " << c_offset << " floats past an aligned address)";
  // The tile as a 12×32 "matrix" with rows ldc apart: expect_matches also checks that columns
  // 32..ldc-1 of each row are untouched.
  const std::vector<float> tile0(c0.begin() + c_offset, c0.begin() + c_offset + kMr * ldc);
  const std::vector<float> tile(c.begin() + c_offset, c.begin() + c_offset + kMr * ldc);
  testing::expect_matches(
      what.str(), kMr, kNr, kc,
      [&](int i, int p) { return a[static_cast<std::size_t>(p) * kMr + i]; },
      [&](int p, int j) { return b[static_cast<std::size_t>(p) * kNr + j]; }, alpha, beta, tile0,
      tile, ldc);
  for (std::size_t at = 0; at < c.size(); ++at) {
    const bool in_tile = at >= static_cast<std::size_t>(c_offset) &&
                         at < static_cast<std::size_t>(c_offset + kMr * ldc);
    if (in_tile) continue;
    ASSERT_EQ(c[at], c0[at]) << what.str() << " wrote " << at << " floats into C's buffer, "
                             << "outside its 12 rows";
  }
}

EXERCISE_TEST("gemm.08", Avx512Kernel, MatchesDoubleReference) {
  if (!__builtin_cpu_supports("avx512f"))
    GTEST_SKIP() << "this CPU has no AVX-512F: gemm.08's kernel cannot run here (rung 8 runs "
                    "rung 7's AVX2 kernel instead)";
  Rng rng(808);
  for (const int kc : {1, 2, 3, 17, 128, 515}) {
    check_kernel(kc, 1.0f, 0.0f, kNr, 0, rng);          // C = A·B, tight rows, C not read
    check_kernel(kc, 1.0f, 0.0f, kNr + 5, 1, rng);      // padded, unaligned C
    check_kernel(kc, -1.5f, 0.25f, kNr + 16, 3, rng);   // sgemm's alpha and beta
    check_kernel(kc, 1.0f, 1.0f, 2 * kNr + 1, 0, rng);  // a later depth block: C += A·B
    if (::testing::Test::HasFailure()) return;
  }
}

}  // namespace
}  // namespace book::gemm
