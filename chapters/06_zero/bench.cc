// bazel run -c opt //chapters/06_zero:bench [-- --benchmark_filter=...]
//
// One ZeRO step per iteration, stages 0 (DDP), 1, 2 and 3 (with and without prefetching the next
// layer's gather) at N = 2 and 4 thread ranks, the stage's
// model (stage.h's defaults), one sgemm thread per rank. Read each stage's time as a ratio to
// stage 0 at the same N. What to expect on a CPU with thread ranks: ZeRO-1 and -2 move exactly
// DDP's bytes (counted by the tests) in twice as many collectives, and update 1/N of the
// elements, so their steps should be within a few percent of DDP's; the extra hand-offs cost more
// than the smaller optimizer saves only on a tiny model. On GPUs with NVLink the same holds for
// ZeRO-1/2 (the ZeRO paper, §7.2: the same volume as DDP), while ZeRO-3 adds 50% traffic that
// prefetching must hide; on this CPU, ZeRO-3 also reduce-scatters every micro-batch (no rank has
// a full gradient to accumulate into) and its thread ranks share one memory bus, so expect it
// slower than DDP, and prefetch to win back part of the gathers' time. Time it on an idle machine
// (`chrt -f 10 bazel-bin/chapters/06_zero/bench`); the README's "Step time" has a run.
#include <benchmark/benchmark.h>

#include <string>

#include "chapters/01_gemm_cpu/sgemm.h"
#include "chapters/03_collectives/lockstep_benchmark.h"
#include "chapters/03_collectives/threads.h"
#include "chapters/06_zero/stage.h"
#include "chapters/06_zero/zero3_trainer.h"
#include "chapters/06_zero/zero_trainer.h"

namespace {

using namespace book::zero;

// One step of `stage` on N thread ranks per iteration (stage 3: range 2 says whether to prefetch).
void BM_ZeroStep(benchmark::State& state) {
  const auto zero_stage = static_cast<Stage>(state.range(0));
  const int ranks = static_cast<int>(state.range(1));
  const bool prefetch = state.range(2) != 0;
  const book::gemm::SgemmThreads one_thread(1);
  const ZeroOptions options = stage::run_options(stage::StageOptions{}, zero_stage);
  book::coll::run_ranks(ranks, [&](book::coll::Communicator& comm) {
    if (zero_stage == Stage::kZero3) {
      Zero3Trainer trainer(comm, options, nullptr, prefetch);
      book::coll::lockstep_benchmark(state, comm, [&] { trainer.step(); });
    } else {
      ZeroTrainer trainer(comm, options);
      book::coll::lockstep_benchmark(state, comm, [&] { trainer.step(); });
    }
  });
  state.SetLabel(std::string(stage_name(zero_stage)) +
                 (zero_stage == Stage::kZero3 && !prefetch ? " without prefetch" : "") +
                 ", N=" + std::to_string(ranks));
}
BENCHMARK(BM_ZeroStep)
    ->ArgsProduct({{0, 1, 2, 3}, {2, 4}, {1}})
    ->Args({3, 2, 0})
    ->Args({3, 4, 0})
    ->ArgNames({"stage", "ranks", "prefetch"})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace

// main(): //common:benchmark_main (unknown flags refused, the machine's load printed first).
