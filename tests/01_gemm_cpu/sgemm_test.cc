// The public sgemm (not an exercise: it always runs the engine with its own pieces). BLAS semantics
// with transposes, alpha, beta, padded leading dimensions, and beta == 0 never reading C.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <limits>
#include <thread>
#include <vector>

#include "chapters/01_gemm_cpu/sgemm.h"
#include "common/check.h"
#include "common/testing/expect_error.h"
#include "tests/01_gemm_cpu/checking.h"

namespace book::gemm {
namespace {

using ::book::testing::expect_error;
using testing::random_matrix;
using testing::Shape;

void check_sgemm(Transpose ta, Transpose tb, const Shape& s, float alpha, float beta, int threads) {
  Rng rng(4242 + s.m * 7 + s.n * 3 + s.k);
  const bool ya = ta == Transpose::kYes, yb = tb == Transpose::kYes;
  // Stored shapes: A is m×k, or k×m when transposed; likewise B.
  const int a_rows = ya ? s.k : s.m, a_cols = ya ? s.m : s.k;
  const int b_rows = yb ? s.n : s.k, b_cols = yb ? s.k : s.n;
  const int lda = a_cols + s.pad_a, ldb = b_cols + s.pad_b, ldc = s.n + s.pad_c;
  const auto a = random_matrix(rng, a_rows, lda), b = random_matrix(rng, b_rows, ldb);
  auto c0 = random_matrix(rng, s.m, ldc);
  if (beta == 0)  // C must not be read: NaN in it would leak into the result
    for (int i = 0; i < s.m; ++i)
      for (int j = 0; j < s.n; ++j)
        c0[static_cast<std::size_t>(i) * ldc + j] = std::numeric_limits<float>::quiet_NaN();
  auto c = c0;
  {
    const SgemmThreads scope(threads);
    sgemm(ta, tb, s.m, s.n, s.k, alpha, a.data(), lda, b.data(), ldb, beta, c.data(), ldc);
  }
  std::ostringstream what;
  what << "sgemm(trans_a=" << ya << ", trans_b=" << yb << ", alpha=" << alpha << ", beta=" << beta
       << ", threads=" << threads << ") on " << s.describe();
  testing::expect_matches(
      what.str(), s.m, s.n, s.k,
      [&](int i, int p) {
        return ya ? a[static_cast<std::size_t>(p) * lda + i]
                  : a[static_cast<std::size_t>(i) * lda + p];
      },
      [&](int p, int j) {
        return yb ? b[static_cast<std::size_t>(j) * ldb + p]
                  : b[static_cast<std::size_t>(p) * ldb + j];
      },
      alpha, beta, c0, c, ldc);
}

TEST(Sgemm, AllTransposesAlphaBetaAndAwkwardShapes) {
  const Transpose both[] = {Transpose::kNo, Transpose::kYes};
  const Shape shapes[] = {
      {1, 1, 1}, {127, 131, 137, 3, 5, 2}, {300, 9, 500}, {7, 260, 1}, {64, 48, 400}};
  for (Transpose ta : both)
    for (Transpose tb : both)
      for (const Shape& s : shapes) {
        check_sgemm(ta, tb, s, 1.0f, 0.0f, 0);
        check_sgemm(ta, tb, s, -1.5f, 0.25f, 0);
        if (HasFailure()) return;
      }
}

TEST(Sgemm, SingleAndMultiThreadedAgree) {
  for (int threads : {1, 2, 3})
    check_sgemm(Transpose::kNo, Transpose::kYes, {203, 301, 257, 1, 1, 1}, 0.5f, 2.0f, threads);
}

// The engine keeps its worker threads and packing buffers between calls, one set per calling
// thread: changing thread counts must restart the team, and two callers at once must not share it.
TEST(Sgemm, ReusedTeamsAndConcurrentCallersStayCorrect) {
  for (int threads : {2, 3, 1, 2, 4})
    check_sgemm(Transpose::kNo, Transpose::kNo, {150, 333, 290, 2, 0, 1}, 1.0f, 0.0f, threads);
  std::vector<std::thread> callers;
  for (int caller = 0; caller < 3; ++caller)
    callers.emplace_back([caller] {
      for (int repeat = 0; repeat < 3; ++repeat)
        check_sgemm(Transpose::kNo, Transpose::kYes, {97 + caller, 260, 131, 0, 1, 0}, 1.0f, 0.5f,
                    0);
    });
  for (auto& caller : callers) caller.join();
}

// A scope sets the count while it lives and puts back the one it found, so scopes nest.
TEST(Sgemm, ThreadScopesNestAndRestore) {
  const int all = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  EXPECT_EQ(sgemm_threads(), 0);
  {
    const SgemmThreads three(3);
    EXPECT_EQ(sgemm_threads(), 3);
    EXPECT_EQ(sgemm_thread_count(), 3);
    {
      const SgemmThreads one(1);
      EXPECT_EQ(sgemm_thread_count(), 1);
    }
    EXPECT_EQ(sgemm_threads(), 3);
    try {
      SgemmThreads bad(-2);
    } catch (const book::Error&) {
    }
    EXPECT_EQ(sgemm_threads(), 3) << "a refused scope must leave the count alone";
  }
  EXPECT_EQ(sgemm_threads(), 0);
  EXPECT_EQ(sgemm_thread_count(), all);
}

// run_on_gemm_threads: every job once, at the same time on distinct threads, the caller's job(0).
TEST(GemmThreads, RunsEveryJobOnceOnItsOwnThread) {
  for (int threads : {1, 2, 3, 2, 4}) {
    std::vector<std::thread::id> ran_on(threads);
    std::vector<int> runs(threads, 0);
    std::atomic<int> arrived{0};
    run_on_gemm_threads(threads, [&](int t) {
      ran_on[t] = std::this_thread::get_id();
      runs[t] += 1;
      // Every job waits here until all have started: they can only all arrive if they run at
      // the same time (bounded, so a failure is a message, not a hang).
      arrived += 1;
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (arrived.load() < threads && std::chrono::steady_clock::now() < deadline) {
      }
    });
    EXPECT_EQ(arrived.load(), threads) << threads << " jobs did not all run at once";
    EXPECT_EQ(ran_on[0], std::this_thread::get_id()) << "job 0 runs on the calling thread";
    for (int t = 0; t < threads; ++t) {
      EXPECT_EQ(runs[t], 1) << "job " << t << " of " << threads;
      for (int u = 0; u < t; ++u)
        EXPECT_NE(ran_on[t], ran_on[u]) << "jobs " << u << " and " << t << " of " << threads;
    }
  }
}

TEST(GemmThreads, AJobsErrorReachesTheCallerAndTheTeamCarriesOn) {
  expect_error(
      [] {
        run_on_gemm_threads(2, [](int t) {
          if (t == 1) throw Error("job 1 failed on purpose");
        });
      },
      "job 1 failed on purpose");
  int ran = 0;
  run_on_gemm_threads(2, [&](int t) {
    if (t == 1) ran = 1;
  });
  EXPECT_EQ(ran, 1) << "the worker that threw must still take jobs";
}

// One level of threads: inside a job, sgemm runs on that job's thread (still correct), and a
// nested call runs its jobs in turn on it.
TEST(GemmThreads, NestedCallsRunOnTheJobsThread) {
  std::vector<std::vector<std::thread::id>> nested(2);
  {
    const SgemmThreads two(2);
    run_on_gemm_threads(2, [&](int t) {
      run_on_gemm_threads(3, [&](int) { nested[t].push_back(std::this_thread::get_id()); });
      check_sgemm(Transpose::kYes, Transpose::kNo, {90 + t, 150, 70, 1, 0, 2}, 1.0f, 0.5f, 2);
    });
  }
  for (int t = 0; t < 2; ++t) {
    ASSERT_EQ(nested[t].size(), 3u) << "job " << t;
    for (const auto& id : nested[t]) EXPECT_EQ(id, nested[t][0]) << "job " << t;
  }
  EXPECT_NE(nested[0][0], nested[1][0]);
}

}  // namespace
}  // namespace book::gemm
