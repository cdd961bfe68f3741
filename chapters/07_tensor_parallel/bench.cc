// bazel run -c opt //chapters/07_tensor_parallel:bench --
//     --benchmark_repetitions=5 --benchmark_enable_random_interleaving=true (one command line)
//
// One training step (forward, backward, AdamW) of the stage's model at tensor-parallel degree
// t = 1, 2, 4 with sequence parallelism off and on, each rank a thread running sgemm on one
// core, next to chapter 4's one-device step, in one run; printed as ratios to t = 1. On a 2-core
// CPU this cannot show a speed-up at t = 4 (4 ranks on 2 cores), and even t = 2 pays for its
// collectives with copies through the same memory bus its compute uses: the bench measures what
// tensor parallelism costs where it has no NVLink to hide behind.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <span>
#include <string>

#include "chapters/01_gemm_cpu/sgemm.h"
#include "chapters/03_collectives/threads.h"
#include "chapters/07_tensor_parallel/parallel_trainer.h"
#include "chapters/07_tensor_parallel/tp_stage.h"
#include "common/benchmark_flags.h"
#include "common/main.h"
#include "common/repetition_reporter.h"
#include "common/table.h"
#include "common/timer.h"

namespace {

using namespace book::tp;

book::train::TrainOptions bench_training() {
  const StageOptions stage;  // the stage's model: 2 layers, d_model 64, 4 heads, 32 × 11 tokens
  book::train::TrainOptions o = stage_training(stage);
  o.total_steps = 1000000;
  return o;
}

// Chapter 4's step, on a thread of its own like every rank below (a fresh thread's allocations
// and sgemm workspace cost the same for both).
void BM_ChapterFourStep(benchmark::State& state) {
  const book::gemm::SgemmThreads one_thread(1);
  book::coll::run_ranks(1, [&](book::coll::Communicator&) {
    book::train::Trainer trainer(bench_training());
    for (auto _ : state) benchmark::DoNotOptimize(trainer.step().loss);
  });
}

// Rank 0 runs the benchmark loop and tells the others, with a one-number broadcast per
// iteration, whether to take another step.
void BM_TensorParallelStep(benchmark::State& state) {
  const book::gemm::SgemmThreads one_thread(1);
  const int t = static_cast<int>(state.range(0));
  const auto sp = state.range(1) ? SequenceParallel::kOn : SequenceParallel::kOff;
  book::coll::run_ranks(t, [&](book::coll::Communicator& comm) {
    TensorParallelTrainer trainer(bench_training(), comm, sp);
    float more = 1;
    if (comm.rank() == 0) {
      for (auto _ : state) {
        comm.broadcast(std::span<float>(&more, 1), 0);
        benchmark::DoNotOptimize(trainer.step().loss);
      }
      more = 0;
      comm.broadcast(std::span<float>(&more, 1), 0);
    } else {
      for (;;) {
        comm.broadcast(std::span<float>(&more, 1), 0);
        if (more == 0) break;
        trainer.step();
      }
    }
  });
}

BENCHMARK(BM_ChapterFourStep)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_TensorParallelStep)
    ->Args({1, 0})
    ->Args({2, 0})
    ->Args({2, 1})
    ->Args({4, 0})
    ->Args({4, 1})
    ->ArgNames({"t", "sp"})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// "median (min-max)" of one benchmark's repetitions.
std::string median_and_spread(std::vector<double> v) {
  const double mid = book::median(v);
  return book::fixed(mid, 2) + " (" + book::fixed(*std::min_element(v.begin(), v.end()), 2) + "-" +
         book::fixed(*std::max_element(v.begin(), v.end()), 2) + ")";
}

}  // namespace

int bench_main(int argc, char** argv) {
  book::init_benchmark(&argc, argv);  // unknown flags refused; the machine's load printed
  book::RepetitionReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  const auto& s = reporter.times;
  const auto base = s.find("BM_TensorParallelStep/t:1/sp:0/real_time");
  const auto one = s.find("BM_ChapterFourStep/real_time");
  if (base != s.end()) {
    book::Table table({"t", "sequence parallelism", "ms/step: median (min-max)", "x t=1",
                       "x chapter 4", "repetitions"});
    const double base_ms = book::median(base->second);
    for (const auto& [name, times] : s) {
      if (name.rfind("BM_TensorParallelStep/", 0) != 0) continue;
      const auto t_at = name.find("t:") + 2, sp_at = name.find("sp:") + 3;
      const double mid = book::median(times);
      table.add_row({name.substr(t_at, name.find('/', t_at) - t_at),
                     name[sp_at] == '1' ? "on" : "off", median_and_spread(times),
                     book::fixed(mid / base_ms, 2),
                     one != s.end() ? book::fixed(mid / book::median(one->second), 2) : "-",
                     std::to_string(times.size())});
    }
    if (one != s.end())
      table.add_row({"chapter 4", "-", median_and_spread(one->second),
                     book::fixed(book::median(one->second) / base_ms, 2), "1.00",
                     std::to_string(one->second.size())});
    std::cout << "\n" << table.markdown();
  }
  benchmark::Shutdown();
  return 0;
}

int main(int argc, char** argv) { return book::run_main(argc, argv, bench_main); }
