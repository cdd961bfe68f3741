// Graded tests of the ladder's rungs (gemm.01 … gemm.09): every rung must compute C = A·B on
// awkward shapes, never read C (it is poisoned with NaN), and never write past column n. Rungs 7
// to 9 are the engine with the track's piece plugged in (edges_test.cc, avx512_kernel_test.cc and
// thread_loop_test.cc test the pieces on their own).
#include <limits>

#include "chapters/01_gemm_cpu/dispatch.h"
#include "common/testing/exercise.h"
#include "tests/01_gemm_cpu/checking.h"

namespace book::gemm {
namespace {

using testing::awkward_shapes;
using testing::kPaddingSentinel;
using testing::random_matrix;
using testing::Shape;

// Rung 8 runs the track's kernel only where the CPU has AVX-512F; elsewhere it is the engine with
// its own AVX2 kernel, and its tests have nothing of the reader's to grade.
bool runs_here(Rung rung) { return rung != Rung::kAvx512 || __builtin_cpu_supports("avx512f"); }

void check_rung(Rung rung) {
  if (!runs_here(rung))
    GTEST_SKIP() << "this CPU has no AVX-512F: rung 8 runs rung 7's AVX2 kernel, not gemm.08's";
  Rng rng(20260101 + static_cast<int>(rung));
  for (const Shape& s : awkward_shapes()) {
    const int lda = s.k + s.pad_a, ldb = s.n + s.pad_b, ldc = s.n + s.pad_c;
    const auto a = random_matrix(rng, s.m, lda), b = random_matrix(rng, s.k, ldb);
    // Poison: NaN where C will be written (a rung that reads C or skips an element yields NaN),
    // a sentinel in the padding (a rung that writes past column n is caught).
    std::vector<float> c0(static_cast<std::size_t>(s.m) * ldc, kPaddingSentinel);
    for (int i = 0; i < s.m; ++i)
      for (int j = 0; j < s.n; ++j)
        c0[static_cast<std::size_t>(i) * ldc + j] = std::numeric_limits<float>::quiet_NaN();
    auto c = c0;
    matmul(rung, s.m, s.n, s.k, a.data(), lda, b.data(), ldb, c.data(), ldc);
    testing::expect_matches(
        rung_name(rung) + " on " + s.describe(), s.m, s.n, s.k,
        [&](int i, int p) { return a[static_cast<std::size_t>(i) * lda + p]; },
        [&](int p, int j) { return b[static_cast<std::size_t>(p) * ldb + j]; }, 1.0, 0.0, c0, c,
        ldc);
    if (::testing::Test::HasFailure()) return;  // one shape's message is enough
  }
}

// A rung must not keep state between calls: the same call twice gives the same C.
void check_repeatable(Rung rung) {
  if (!runs_here(rung))
    GTEST_SKIP() << "this CPU has no AVX-512F: rung 8 runs rung 7's AVX2 kernel, not gemm.08's";
  Rng rng(77);
  const int m = 61, n = 83, k = 300;
  const auto a = random_matrix(rng, m, k), b = random_matrix(rng, k, n);
  std::vector<float> first(m * n, std::numeric_limits<float>::quiet_NaN()), second = first;
  matmul(rung, m, n, k, a.data(), k, b.data(), n, first.data(), n);
  matmul(rung, m, n, k, a.data(), k, b.data(), n, second.data(), n);
  for (int i = 0; i < m * n; ++i)
    ASSERT_EQ(first[i], second[i]) << rung_name(rung) << ": two identical calls differ at element "
                                   << i << " (m=61 n=83 k=300)";
}

EXERCISE_TEST("gemm.01", Naive, MatchesDoubleReferenceOnAwkwardShapes) { check_rung(Rung::kNaive); }
EXERCISE_TEST("gemm.02", Reorder, MatchesDoubleReferenceOnAwkwardShapes) {
  check_rung(Rung::kReorder);
}
EXERCISE_TEST("gemm.03", Blocked, MatchesDoubleReferenceOnAwkwardShapes) {
  check_rung(Rung::kBlocked);
}
EXERCISE_TEST("gemm.04", Microkernel, MatchesDoubleReferenceOnAwkwardShapes) {
  check_rung(Rung::kMicrokernel);
}
EXERCISE_TEST("gemm.05", Packed, MatchesDoubleReferenceOnAwkwardShapes) {
  check_rung(Rung::kPacked);
}
EXERCISE_TEST("gemm.06", FiveLoops, MatchesDoubleReferenceOnAwkwardShapes) {
  check_rung(Rung::kFiveLoops);
}
EXERCISE_TEST("gemm.07", Edges, MatchesDoubleReferenceOnAwkwardShapes) { check_rung(Rung::kEdges); }
EXERCISE_TEST("gemm.08", Avx512, MatchesDoubleReferenceOnAwkwardShapes) {
  check_rung(Rung::kAvx512);
}
EXERCISE_TEST("gemm.09", Threads, MatchesDoubleReferenceOnAwkwardShapes) {
  check_rung(Rung::kThreads);
}

EXERCISE_TEST("gemm.06", FiveLoops, Repeatable) { check_repeatable(Rung::kFiveLoops); }
EXERCISE_TEST("gemm.07", Edges, Repeatable) { check_repeatable(Rung::kEdges); }
EXERCISE_TEST("gemm.08", Avx512, Repeatable) { check_repeatable(Rung::kAvx512); }
EXERCISE_TEST("gemm.09", Threads, Repeatable) { check_repeatable(Rung::kThreads); }

}  // namespace
}  // namespace book::gemm
