// The engine with per-thread loops that are not its own (scaffolding, not graded): loops that
// would hang the threads or reach outside the matrices are refused with a message before any
// thread starts, and any loop that keeps gemm.h's contract gives the right C on real threads.
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "chapters/01_gemm_cpu/engine/engine.h"
#include "common/check.h"
#include "common/testing/expect_error.h"
#include "tests/01_gemm_cpu/checking.h"

namespace book::gemm {
namespace {

using ::book::testing::expect_error;

void run_with_loop(decltype(&five_loops_thread) loop, int threads, int m, int n, int k,
                   std::vector<float>& c) {
  Rng rng(m * 7 + n);
  const auto a = testing::random_matrix(rng, m, k), b = testing::random_matrix(rng, k, n);
  c.assign(static_cast<std::size_t>(m) * n, std::numeric_limits<float>::quiet_NaN());
  engine::Pieces pieces = engine::kOwnPieces;
  pieces.five_loops_thread = loop;
  engine::five_loops(engine::plain(m, n, k, a.data(), k, b.data(), n, c.data(), n),
                     engine::kAvx2Kernel, threads, pieces);
  testing::expect_matches(
      "the engine with another valid per-thread loop, " + std::to_string(threads) + " threads", m,
      n, k, [&](int i, int p) { return a[static_cast<std::size_t>(i) * k + p]; },
      [&](int p, int j) { return b[static_cast<std::size_t>(p) * n + j]; }, 1.0, 0.0, c, c, n);
}

// A valid loop unlike the engine's own: thread 0 packs every block of A alone, and the column
// micro-panels are dealt out in turn (thread t takes panels t, t + threads, ...).
void dealt_columns(int thread, int threads, ThreadWork& work) {
  const LoopSizes s = work.sizes();
  for (int ic = 0; ic < s.m; ic += s.mc)
    for (int pc = 0; pc < s.k; pc += s.kc) {
      work.wait_for_all();
      if (thread == 0) work.pack_a(ic, pc, 0, (std::min(s.mc, s.m - ic) + s.mr - 1) / s.mr);
      work.wait_for_all();
      for (int jc = thread * s.nr; jc < s.n; jc += threads * s.nr) {
        const int nc = std::min(s.nr, s.n - jc);
        work.pack_b(pc, jc, nc);
        work.multiply(ic, pc, jc, nc);
      }
    }
}

TEST(EngineThreadLoops, AnyLoopThatKeepsTheContractWorks) {
  std::vector<float> c;
  for (const int threads : {1, 2, 3}) run_with_loop(dealt_columns, threads, 75, 203, 530, c);
}

TEST(EngineThreadLoops, RefusesThreadsThatPassDifferentBarriers) {
  // Thread 0 passes one barrier more than thread 1: it would wait for thread 1 forever.
  auto skipping = [](int thread, int threads, ThreadWork& work) {
    engine::five_loops_thread(thread, threads, work);
    if (thread == 0) work.wait_for_all();
  };
  std::vector<float> c;
  expect_error([&] { run_with_loop(skipping, 2, 30, 64, 20, c); },
               {"thread 1 calls wait_for_all() 2 times, thread 0 3 times", "forever"});
}

TEST(EngineThreadLoops, RefusesStepsOutsideTheMatrices) {
  std::vector<float> c;
  auto past_n = [](int, int, ThreadWork& work) { work.pack_b(0, 0, work.sizes().n + 1); };
  expect_error([&] { run_with_loop(past_n, 1, 30, 64, 20, c); },
               {"thread 0 of 1", "step 1: pack_b(0, 0, 65)", "must lie in [0, n=64)"});
  auto bad_depth = [](int, int, ThreadWork& work) { work.multiply(0, 7, 0, 16); };
  expect_error([&] { run_with_loop(bad_depth, 1, 30, 64, 20, c); },
               {"multiply(0, 7, 0, 16)", "pc must be a multiple of KC"});
  auto bad_rows = [](int, int, ThreadWork& work) { work.pack_a(work.sizes().mc, 0, 0, 1); };
  expect_error([&] { run_with_loop(bad_rows, 1, 30, 64, 20, c); },
               {"pack_a(2052, 0, 0, 1)", "ic must be a multiple of MC=2052 below m=30"});
  auto too_many_panels = [](int, int, ThreadWork& work) {
    work.wait_for_all();
    work.pack_a(0, 0, 0, 6);
  };
  expect_error([&] { run_with_loop(too_many_panels, 1, 30, 64, 20, c); },
               {"step 2: pack_a(0, 0, 0, 6)", "has 5 micro-panels"});
}

}  // namespace
}  // namespace book::gemm
