// bazel run -c opt //chapters/06_zero:bench [-- --benchmark_filter=...]
//
// One ZeRO step per iteration, stages 0 (DDP), 1 and 2 at N = 2 and 4 thread ranks, the stage's
// model (stage.h's defaults), one sgemm thread per rank. Read each stage's time as a ratio to
// stage 0 at the same N. What to expect on a CPU with thread ranks: ZeRO-1 and -2 move exactly
// DDP's bytes (counted by the tests) in twice as many collectives, and update 1/N of the
// elements, so their steps should be within a few percent of DDP's; the extra hand-offs cost more
// than the smaller optimizer saves only on a tiny model. On GPUs with NVLink the same holds for
// ZeRO-1/2 (the ZeRO paper, §7.2: the same volume as DDP), while ZeRO-3 adds 50% traffic that
// prefetching must hide. Time it on an idle machine
// (`chrt -f 10 bazel-bin/chapters/06_zero/bench`); the README reports only counted numbers.
#include <benchmark/benchmark.h>

#include <span>
#include <string>

#include "chapters/01_gemm_cpu/sgemm.h"
#include "chapters/03_collectives/threads.h"
#include "chapters/06_zero/stage.h"
#include "chapters/06_zero/zero_trainer.h"
#include "common/timer.h"

namespace {

using namespace book::zero;

// One step of `stage` on N thread ranks per iteration; rank 0 runs the benchmark loop and tells
// the others each time whether to step again.
void BM_ZeroStep(benchmark::State& state) {
  const auto zero_stage = static_cast<Stage>(state.range(0));
  const int ranks = static_cast<int>(state.range(1));
  book::gemm::set_sgemm_threads(1);
  book::coll::run_ranks(ranks, [&](book::coll::Communicator& comm) {
    ZeroTrainer trainer(comm, stage::run_options(stage::StageOptions{}, zero_stage));
    trainer.step();
    double go = 1;
    if (comm.rank() == 0) {
      for (auto _ : state) {
        comm.broadcast(std::span<double>(&go, 1), 0);
        const book::Timer timer;
        trainer.step();
        state.SetIterationTime(timer.seconds());
      }
      go = 0;
      comm.broadcast(std::span<double>(&go, 1), 0);
    } else {
      for (;;) {
        comm.broadcast(std::span<double>(&go, 1), 0);
        if (go == 0) break;
        trainer.step();
      }
    }
  });
  book::gemm::set_sgemm_threads(0);
  state.SetLabel(std::string(stage_name(zero_stage)) + ", N=" + std::to_string(ranks));
}
BENCHMARK(BM_ZeroStep)
    ->ArgsProduct({{0, 1, 2}, {2, 4}})
    ->ArgNames({"stage", "ranks"})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace

// main(): //common:benchmark_main (unknown flags refused, the machine's load printed first).
