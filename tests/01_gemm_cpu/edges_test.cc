// Graded tests of gemm.07's two pieces on their own: packing one micro-panel with zero padding,
// and writing the valid corner of a partial tile into C. (rungs_test.cc runs rung 7 as a whole.)
#include <cmath>
#include <limits>
#include <sstream>
#include <vector>

#include "chapters/01_gemm_cpu/gemm.h"
#include "common/testing/exercise.h"
#include "tests/01_gemm_cpu/checking.h"

namespace book::gemm {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr int kGuard = 7;  // floats after the panel or tile that must stay untouched

struct PanelCase {
  long step_stride, lane_stride;
  int lanes, width, kc;
};

// Packs a panel read from a random source with the given strides and checks every float of dst:
// the source element for lanes < `lanes`, exactly 0.0f beyond, and the guard after it untouched.
void check_panel(const PanelCase& pc, Rng& rng) {
  const long extent = (pc.kc - 1) * pc.step_stride + (pc.width - 1) * pc.lane_stride + 1;
  std::vector<float> src(static_cast<std::size_t>(extent));
  fill_uniform<float>(src, rng);
  std::vector<float> dst(static_cast<std::size_t>(pc.kc) * pc.width + kGuard, kNaN);
  for (int g = 0; g < kGuard; ++g) dst[dst.size() - 1 - g] = testing::kPaddingSentinel;
  pack_padded_panel(src.data(), pc.step_stride, pc.lane_stride, pc.lanes, pc.width, pc.kc,
                    dst.data());
  std::ostringstream call;
  call << "pack_padded_panel(step_stride=" << pc.step_stride << ", lane_stride=" << pc.lane_stride
       << ", lanes=" << pc.lanes << ", width=" << pc.width << ", kc=" << pc.kc << ")";
  for (int p = 0; p < pc.kc; ++p)
    for (int l = 0; l < pc.width; ++l) {
      const float expected = l < pc.lanes ? src[p * pc.step_stride + l * pc.lane_stride] : 0.0f;
      const float actual = dst[static_cast<std::size_t>(p) * pc.width + l];
      ASSERT_TRUE(actual == expected)
          << call.str() << ": dst[" << p << " * " << pc.width << " + " << l << "] (step " << p
          << ", lane " << l << (l < pc.lanes ? ", from the source" : ", padding") << ") should be "
          << expected << ", got " << actual;
    }
  for (int g = 0; g < kGuard; ++g)
    ASSERT_EQ(dst[static_cast<std::size_t>(pc.kc) * pc.width + g], testing::kPaddingSentinel)
        << call.str() << " wrote dst[" << pc.kc * pc.width + g << "], past the panel's "
        << pc.kc * pc.width << " floats";
}

EXERCISE_TEST("gemm.07", PackPaddedPanel, CopiesTheLanesAndZeroesTheRest) {
  Rng rng(707);
  for (const int width : {6, 16, 12, 32})
    for (const int lanes : {1, width / 2, width - 1, width})
      for (const int kc : {1, 5, 64}) {
        check_panel({1, 37, lanes, width, kc}, rng);  // a panel of row-major A (lda = 37)
        check_panel({41, 1, lanes, width, kc}, rng);  // a panel of row-major B (ldb = 41)
        check_panel({3, 50, lanes, width, kc}, rng);  // other strides (a transposed operand)
        if (::testing::Test::HasFailure()) return;
      }
}

struct TileCase {
  int mr, nr, rows, cols;
  float alpha, beta;
  long ldc;
};

// Writes a random tile into a C whose every float is known: NaN in the corner when beta == 0
// (C must not be read), random values otherwise, and a sentinel everywhere else.
void check_tile(const TileCase& tc, Rng& rng) {
  std::vector<float> tile(static_cast<std::size_t>(tc.mr) * tc.nr);
  fill_uniform<float>(tile, rng);
  const int c_rows = tc.mr + 1;  // one row below the tile, which must stay untouched
  std::vector<float> c0(static_cast<std::size_t>(c_rows) * tc.ldc, testing::kPaddingSentinel);
  for (int i = 0; i < tc.rows; ++i)
    for (int j = 0; j < tc.cols; ++j)
      c0[i * tc.ldc + j] = tc.beta == 0.0f ? kNaN : static_cast<float>(rng.uniform(-1, 1));
  auto c = c0;
  write_partial_tile(tile.data(), tc.nr, tc.rows, tc.cols, tc.alpha, tc.beta, c.data(), tc.ldc);
  std::ostringstream call;
  call << "write_partial_tile(tile " << tc.mr << "x" << tc.nr << ", rows=" << tc.rows
       << ", cols=" << tc.cols << ", alpha=" << tc.alpha << ", beta=" << tc.beta
       << ", ldc=" << tc.ldc << ")";
  for (int i = 0; i < c_rows; ++i)
    for (int j = 0; j < tc.ldc; ++j) {
      const std::size_t at = static_cast<std::size_t>(i) * tc.ldc + j;
      if (i >= tc.rows || j >= tc.cols) {
        ASSERT_EQ(c[at], c0[at]) << call.str() << " wrote C(" << i << "," << j << "), outside the "
                                 << tc.rows << "x" << tc.cols << " corner";
        continue;
      }
      // alpha·t + beta·c in double; float rounding of the product, the sum (or one FMA) is
      // within 2 units in the last place of the larger term.
      const double product = static_cast<double>(tc.alpha) * tile[i * tc.nr + j];
      const double scaled = tc.beta == 0.0f ? 0.0 : static_cast<double>(tc.beta) * c0[at];
      const double expected = product + scaled;
      const double tolerance = (std::abs(product) + std::abs(scaled)) * std::ldexp(1.0, -22);
      ASSERT_LE(std::abs(c[at] - expected), tolerance)
          << call.str() << ": C(" << i << "," << j << ") should be " << expected << " (" << tc.alpha
          << " * " << tile[i * tc.nr + j] << " + " << tc.beta << " * " << c0[at] << "), got "
          << c[at];
    }
}

EXERCISE_TEST("gemm.07", WritePartialTile, WritesOnlyTheValidCorner) {
  Rng rng(7007);
  for (const auto& [mr, nr] : {std::pair{6, 16}, std::pair{12, 32}})
    for (const int rows : {1, mr - 1, mr})
      for (const int cols : {1, nr / 2 + 1, nr - 1, nr}) {
        if (rows == mr && cols == nr) continue;  // the engine never sends a full tile here
        check_tile({mr, nr, rows, cols, 1.0f, 0.0f, nr + 3}, rng);    // C = A·B, C not read
        check_tile({mr, nr, rows, cols, -1.5f, 0.25f, nr + 9}, rng);  // sgemm's alpha and beta
        check_tile({mr, nr, rows, cols, 0.5f, 1.0f, nr}, rng);        // a later depth block
        if (::testing::Test::HasFailure()) return;
      }
}

}  // namespace
}  // namespace book::gemm
