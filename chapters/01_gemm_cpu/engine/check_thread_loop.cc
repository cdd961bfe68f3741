// A dry run of per-thread loops (gemm.09) before the engine trusts them with threads and memory:
// each thread's loop runs in turn against a ThreadWork that checks every step's arguments and
// counts its barriers. A thread that passes fewer barriers than another would leave the others
// waiting forever, and a block outside the matrices would be read or written out of bounds; both
// become a book::Error that says which thread, which step and what was wrong.
#include <algorithm>
#include <array>
#include <ostream>
#include <vector>

#include "chapters/01_gemm_cpu/engine/engine.h"
#include "common/check.h"

namespace book::gemm::engine {
namespace {

// One step of one thread's loop, printed only when a check fails (the dry run builds no strings).
struct Step {
  const LoopSizes& sizes;
  int thread, threads;
  long number;
  const char* name;
  std::array<int, 4> args;
  int arg_count;
};

std::ostream& operator<<(std::ostream& out, const Step& step) {
  const LoopSizes& s = step.sizes;
  out << "five_loops_thread (gemm.09), thread " << step.thread << " of " << step.threads
      << " on m=" << s.m << " n=" << s.n << " k=" << s.k << " (MC=" << s.mc << " KC=" << s.kc
      << " NC=" << s.nc << "), step " << step.number << ": " << step.name << "(";
  for (int i = 0; i < step.arg_count; ++i) out << (i ? ", " : "") << step.args[i];
  return out << ")";
}

class CheckingWork final : public ThreadWork {
 public:
  CheckingWork(const LoopSizes& sizes, int thread, int threads)
      : s_(sizes), thread_(thread), threads_(threads) {}

  LoopSizes sizes() const override { return s_; }

  void pack_a(int ic, int pc, int first, int last) override {
    const Step step = next("pack_a", {ic, pc, first, last}, 4);
    check_block(step, ic, pc);
    const int panels = (std::min(s_.mc, s_.m - ic) + s_.mr - 1) / s_.mr;
    BOOK_CHECK(0 <= first && first < last && last <= panels,
               step << ": the block of A at ic=" << ic << " has " << panels
                    << " micro-panels; pack a range 0 <= first < last <= " << panels);
  }

  void pack_b(int pc, int jc, int nc) override {
    const Step step = next("pack_b", {pc, jc, nc, 0}, 3);
    check_depth(step, pc);
    check_columns(step, jc, nc);
  }

  void multiply(int ic, int pc, int jc, int nc) override {
    const Step step = next("multiply", {ic, pc, jc, nc}, 4);
    check_block(step, ic, pc);
    check_columns(step, jc, nc);
  }

  void wait_for_all() override {
    ++steps_;
    ++barriers_;
  }

  int barriers() const { return barriers_; }

 private:
  Step next(const char* name, std::array<int, 4> args, int count) {
    return {s_, thread_, threads_, ++steps_, name, args, count};
  }
  void check_depth(const Step& step, int pc) const {
    BOOK_CHECK(pc >= 0 && pc < s_.k && pc % s_.kc == 0,
               step << ": pc must be a multiple of KC=" << s_.kc << " below k=" << s_.k);
  }
  void check_block(const Step& step, int ic, int pc) const {
    BOOK_CHECK(ic >= 0 && ic < s_.m && ic % s_.mc == 0,
               step << ": ic must be a multiple of MC=" << s_.mc << " below m=" << s_.m);
    check_depth(step, pc);
  }
  void check_columns(const Step& step, int jc, int nc) const {
    BOOK_CHECK(jc >= 0 && nc >= 1 && nc <= s_.nc && jc + nc <= s_.n,
               step << ": columns [jc, jc + nc) must lie in [0, n=" << s_.n
                    << ") with 1 <= nc <= NC=" << s_.nc);
  }

  const LoopSizes s_;
  const int thread_, threads_;
  int barriers_ = 0;
  long steps_ = 0;
};

}  // namespace

void check_thread_loop(decltype(&book::gemm::five_loops_thread) loop, const LoopSizes& sizes,
                       int threads) {
  std::vector<int> barriers(threads);
  for (int t = 0; t < threads; ++t) {
    CheckingWork work(sizes, t, threads);
    loop(t, threads, work);
    barriers[t] = work.barriers();
  }
  for (int t = 1; t < threads; ++t)
    BOOK_CHECK(barriers[t] == barriers[0], "five_loops_thread (gemm.09) on m="
                                               << sizes.m << " n=" << sizes.n << " k=" << sizes.k
                                               << " with " << threads << " threads: thread " << t
                                               << " calls wait_for_all() " << barriers[t]
                                               << " times, thread 0 " << barriers[0]
                                               << " times; every thread must pass every barrier, "
                                                  "or the others wait for it forever");
}

}  // namespace book::gemm::engine
