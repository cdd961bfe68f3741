// Graded test of gemm.09 on its own: the per-thread loops, run for every thread in turn against a
// ThreadWork that records each step with the number of barriers the thread has passed. Steps of
// different threads between the same two barriers may run in any order, so the checks below ask
// what must hold for every order: the same barriers on every thread, each block of A packed whole
// and once with no multiply running meanwhile, every block multiplied into every column once, in
// depth order, from the thread's own freshly packed block of B; and the even split of whole
// micro-panels that makes it fast. (rungs_test.cc runs rung 9 as a whole, on real threads.)
#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "chapters/01_gemm_cpu/gemm.h"
#include "common/testing/exercise.h"

namespace book::gemm {
namespace {

struct Step {
  enum class Kind { kPackA, kPackB, kMultiply } kind;
  int thread, phase;   // phase: barriers this thread had passed
  int a0, a1, a2, a3;  // the arguments, in declaration order
};

class RecordingWork final : public ThreadWork {
 public:
  RecordingWork(const LoopSizes& sizes, int thread, std::vector<Step>& steps)
      : sizes_(sizes), thread_(thread), steps_(steps) {}
  LoopSizes sizes() const override { return sizes_; }
  void pack_a(int ic, int pc, int first, int last) override {
    steps_.push_back({Step::Kind::kPackA, thread_, barriers, ic, pc, first, last});
  }
  void pack_b(int pc, int jc, int nc) override {
    steps_.push_back({Step::Kind::kPackB, thread_, barriers, pc, jc, nc, 0});
  }
  void multiply(int ic, int pc, int jc, int nc) override {
    steps_.push_back({Step::Kind::kMultiply, thread_, barriers, ic, pc, jc, nc});
  }
  void wait_for_all() override { ++barriers; }
  int barriers = 0;

 private:
  LoopSizes sizes_;
  int thread_;
  std::vector<Step>& steps_;
};

std::string describe(const LoopSizes& s, int threads) {
  std::ostringstream out;
  out << "five_loops_thread with " << threads << " threads on m=" << s.m << " n=" << s.n
      << " k=" << s.k << " (MR=" << s.mr << " NR=" << s.nr << " MC=" << s.mc << " KC=" << s.kc
      << " NC=" << s.nc << ")";
  return out.str();
}

int panels_of_block(const LoopSizes& s, int ic) {
  return (std::min(s.mc, s.m - ic) + s.mr - 1) / s.mr;
}

// Runs every thread's loops and checks the contract of gemm.h; adds a failure naming the first
// broken rule.
void check_loops(const LoopSizes& s, int threads) {
  const std::string what = describe(s, threads);
  std::vector<Step> steps;
  std::vector<int> barriers(threads);
  for (int t = 0; t < threads; ++t) {
    RecordingWork work(s, t, steps);
    five_loops_thread(t, threads, work);
    barriers[t] = work.barriers;
  }
  for (int t = 1; t < threads; ++t)
    ASSERT_EQ(barriers[t], barriers[0])
        << what << ": thread " << t << " called wait_for_all() " << barriers[t]
        << " times, thread 0 " << barriers[0] << " times (the threads would wait forever)";

  // Blocks of A: packed whole, once, by pack steps of one phase (or consecutive phases) with no
  // multiply in the same phase; multiplied only while the shared buffer holds them complete.
  std::map<int, std::vector<const Step*>> by_phase;
  for (const Step& step : steps) by_phase[step.phase].push_back(&step);
  std::pair<int, int> held{-1, -1};                 // the block (ic, pc) in the shared buffer
  std::set<int> packed;                             // its panels packed so far
  std::map<std::pair<int, int>, int> packed_count;  // times each block was packed in full
  for (const auto& [phase, in_phase] : by_phase) {
    // Packing and multiplying between the same two barriers is safe only on one thread.
    std::set<int> packers, multipliers, both;
    for (const Step* step : in_phase) {
      if (step->kind == Step::Kind::kPackA) packers.insert(step->thread);
      if (step->kind == Step::Kind::kMultiply) multipliers.insert(step->thread);
      if (step->kind != Step::Kind::kPackB) both.insert(step->thread);
    }
    ASSERT_FALSE(!packers.empty() && !multipliers.empty() && both.size() > 1)
        << what << ": between barriers " << phase << " and " << phase + 1
        << " one thread packs the shared block of A while another may be multiplying from it: "
           "put a wait_for_all() between packing and multiplying";
    for (const Step* step : in_phase) {  // one thread's steps in its order, thread after thread
      if (step->kind == Step::Kind::kPackA) {
        const std::pair<int, int> block{step->a0, step->a1};
        ASSERT_TRUE(step->a0 >= 0 && step->a0 < s.m && step->a0 % s.mc == 0 && step->a1 >= 0 &&
                    step->a1 < s.k && step->a1 % s.kc == 0 && 0 <= step->a2 &&
                    step->a2 < step->a3 && step->a3 <= panels_of_block(s, step->a0))
            << what << ": thread " << step->thread << " asked pack_a(" << step->a0 << ", "
            << step->a1 << ", " << step->a2 << ", " << step->a3 << "), outside the blocks of A";
        if (block != held) held = block, packed.clear();
        for (int panel = step->a2; panel < step->a3; ++panel)
          ASSERT_TRUE(packed.insert(panel).second)
              << what << ": micro-panel " << panel << " of the block of A at (ic=" << block.first
              << ", pc=" << block.second << ") is packed twice (thread " << step->thread
              << ", after " << phase << " barriers)";
        if (static_cast<int>(packed.size()) == panels_of_block(s, block.first))
          ++packed_count[block];
      } else if (step->kind == Step::Kind::kMultiply) {
        const std::pair<int, int> block{step->a0, step->a1};
        ASSERT_TRUE(block == held &&
                    static_cast<int>(packed.size()) == panels_of_block(s, block.first))
            << what << ": thread " << step->thread
            << " multiplies the block of A at (ic=" << block.first << ", pc=" << block.second
            << ") after " << phase
            << " barriers, but the shared buffer does not hold all of it packed then";
      }
    }
  }

  // Columns: each block (ic, pc) multiplied into every column once; depth blocks in order; each
  // multiply from the block of B the thread packed just before; whole micro-panels, evenly.
  const int blocks_k = (s.k + s.kc - 1) / s.kc, col_panels = (s.n + s.nr - 1) / s.nr;
  std::map<std::tuple<int, int>, std::vector<int>> depth_order;       // (ic, column) -> pc in order
  std::map<std::pair<int, int>, std::vector<int>> panels_per_thread;  // (ic, pc) -> per thread
  std::vector<std::tuple<int, int, int>> last_b(threads, {-1, -1, -1});
  // Steps are recorded thread after thread; sorting by phase (stable) keeps each thread's order
  // and puts every step after those of earlier phases, whichever thread took them.
  std::vector<const Step*> ordered;
  for (const Step& step : steps) ordered.push_back(&step);
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const Step* x, const Step* y) { return x->phase < y->phase; });
  std::map<std::tuple<int, int>, std::pair<int, int>>
      last_writer;  // (ic, column) -> (thread, phase)
  for (const Step* step : ordered) {
    if (step->kind == Step::Kind::kPackB) {
      last_b[step->thread] = {step->a0, step->a1, step->a2};
      continue;
    }
    if (step->kind != Step::Kind::kMultiply) continue;
    const int ic = step->a0, pc = step->a1, jc = step->a2, nc = step->a3;
    ASSERT_TRUE(jc >= 0 && nc >= 1 && nc <= s.nc && jc + nc <= s.n)
        << what << ": thread " << step->thread << " multiplies columns [" << jc << ", " << jc + nc
        << "), outside [0, n) or wider than NC";
    ASSERT_EQ(last_b[step->thread], std::make_tuple(pc, jc, nc))
        << what << ": thread " << step->thread << " multiplies (ic=" << ic << ", pc=" << pc
        << ", jc=" << jc << ", nc=" << nc << ") but the block of B it packed last is not that one";
    ASSERT_TRUE(jc % s.nr == 0 && (nc % s.nr == 0 || jc + nc == s.n))
        << what << ": thread " << step->thread << " multiplies columns [" << jc << ", " << jc + nc
        << "), not whole NR=" << s.nr << " micro-panels (a partial tile mid-C costs a buffer)";
    auto& counts = panels_per_thread[{ic, pc}];
    counts.resize(threads);
    counts[step->thread] += (nc + s.nr - 1) / s.nr;
    for (int j = jc; j < jc + nc; ++j) {
      auto& order = depth_order[{ic, j}];
      ASSERT_EQ(pc, static_cast<int>(order.size()) * s.kc)
          << what << ": column " << j << " of rows from " << ic << " gets the depth block pc=" << pc
          << " after " << order.size() << " depth blocks; each column needs pc = 0, KC, 2 KC, ... "
          << "once each, in that order (pc = 0 overwrites C)";
      order.push_back(pc);
      auto [writer, when] = last_writer.count({ic, j}) ? last_writer[{ic, j}] : std::pair{-1, -1};
      ASSERT_FALSE(writer >= 0 && writer != step->thread && when == step->phase)
          << what << ": threads " << writer << " and " << step->thread << " both write column " << j
          << " of rows from " << ic << " between the same two barriers";
      last_writer[{ic, j}] = {step->thread, step->phase};
    }
  }
  for (int ic = 0; ic < s.m; ic += s.mc) {
    for (int j = 0; j < s.n; ++j) {
      const std::size_t depths = depth_order[{ic, j}].size();
      ASSERT_EQ(depths, static_cast<std::size_t>(blocks_k))
          << what << ": column " << j << " of rows from " << ic << " gets " << depths
          << " depth blocks, not all " << blocks_k;
    }
    for (int pc = 0; pc < s.k; pc += s.kc) {
      const int packings = packed_count[std::pair{ic, pc}];
      ASSERT_EQ(packings, 1) << what << ": the block of A at (ic=" << ic << ", pc=" << pc
                             << ") is packed in full " << packings << " times, not once";
      const auto& counts = panels_per_thread[{ic, pc}];
      const auto [fewest, most] = std::minmax_element(counts.begin(), counts.end());
      ASSERT_LE(*most - *fewest, 1)
          << what << ": for block (ic=" << ic << ", pc=" << pc << ") one thread gets " << *most
          << " micro-panels of C's " << col_panels << " and another " << *fewest
          << ": the threads should finish together";
    }
  }
}

EXERCISE_TEST("gemm.09", FiveLoopsThread, KeepsTheContractForEveryInterleaving) {
  const LoopSizes shapes[] = {
      {1, 1, 1, 6, 16, 24, 64, 48},             // one tile, one thread
      {100, 333, 300, 6, 16, 24, 64, 48},       // blocks that cut every dimension mid-way
      {61, 83, 300, 12, 32, 36, 128, 64},       // the repeat check's shape, AVX-512 tiles
      {2100, 90, 400, 12, 32, 2052, 512, 256},  // the book's blocks: two row blocks, one depth
      {40, 1000, 1030, 6, 16, 2052, 256, 512},  // more columns than one NC, three depth blocks
  };
  for (const LoopSizes& s : shapes)
    for (const int threads : {1, 2, 3, 4}) {
      if (threads > (s.n + s.nr - 1) / s.nr) continue;  // the engine never starts more
      check_loops(s, threads);
      if (::testing::Test::HasFailure()) return;
    }
}

}  // namespace
}  // namespace book::gemm
