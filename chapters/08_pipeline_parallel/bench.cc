// bazel run -c opt //chapters/08_pipeline_parallel:bench [-- --benchmark_filter=...]
//
// One pipelined training step (forward and backward of m = 8 micro-batches) per iteration, every
// schedule at p = 2 and 4 thread ranks, one sgemm thread per rank, 8 layers of width 64. Read each
// schedule's time as a ratio to GPipe at the same p. What to expect: on p idle cores the bubble
// decides, so 1F1B ≈ GPipe ((p−1)/(m+p−1) both), interleaved below them by the smaller bubble
// unless its extra messages cost more, ZB-H1 lowest when W is as long as B. With fewer cores than
// ranks (this 2-core VM at p = 4) the ranks share the CPU and an idle rank lends its core, so the
// schedules converge to the same total work. Time it on an idle machine
// (`chrt -f 10 bazel-bin/chapters/08_pipeline_parallel/bench`); the README's "Step time" has a run.
#include <benchmark/benchmark.h>

#include <string>

#include "chapters/01_gemm_cpu/sgemm.h"
#include "chapters/03_collectives/lockstep_benchmark.h"
#include "chapters/03_collectives/threads.h"
#include "chapters/08_pipeline_parallel/executor.h"
#include "chapters/08_pipeline_parallel/partition.h"
#include "chapters/08_pipeline_parallel/registry.h"

namespace {

using namespace book::pp;

// One step of `schedule` on p thread ranks per iteration, the ranks in lockstep (chapter 3's
// lockstep_benchmark).
void BM_PipelineStep(benchmark::State& state) {
  const std::string name = schedule_names().at(static_cast<std::size_t>(state.range(0)));
  const int p = static_cast<int>(state.range(1)), m = 8;
  const Shape shape{p, m, name == "interleaved" ? 2 : 1};
  const Schedule schedule = make_schedule(name, shape);
  book::train::Config config;
  config.n_layer = 8, config.d_model = 64, config.n_head = 4;
  const auto micro = random_micro_batches(config, m, 2, config.context, 1);
  const std::vector<int> cuts = even_boundaries(config.n_layer, shape.virtual_stages());
  const book::gemm::SgemmThreads one_thread(1);
  book::coll::run_ranks(p, [&](book::coll::Communicator& comm) {
    auto chunks = make_rank_models<float>(config, 2, shape, cuts, comm.rank(), 1);
    book::coll::lockstep_benchmark(state, comm,
                                   [&] { execute<float>(comm, schedule, chunks, micro); });
  });
  state.SetLabel(name + ", p=" + std::to_string(p) + ", m=" + std::to_string(m));
}
BENCHMARK(BM_PipelineStep)
    ->ArgsProduct({{0, 1, 2, 3}, {2, 4}})
    ->ArgNames({"schedule", "p"})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace

// main(): //common:benchmark_main (unknown flags refused, the machine's load printed first).
