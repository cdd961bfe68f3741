// The busbw stage's section "What one ring looks like": with --trace, one 4 MiB ring and one
// fused-ring all-reduce recorded by the communicator's trace, for Perfetto and trace.gp.
#include <cstdio>

#include "chapters/03_collectives/stage.h"
#include "chapters/03_collectives/threads.h"
#include "common/trace.h"

namespace book::coll::stage {
namespace {

// One traced 4 MiB all-reduce after a warm-up one; writes `path` (Chrome JSON) and path.tsv.
std::size_t trace_one(int ranks, Algorithm algorithm, const std::string& path) {
  Trace trace;
  const std::size_t count = (4u << 20) / sizeof(float);
  run_ranks(ranks, [&](Communicator& comm) {
    std::vector<float> data(count, 1.0f);
    comm.all_reduce(std::span<float>(data), ReduceOp::kSum, algorithm);  // warm the pages
    comm.barrier();
    comm.set_trace(&trace);
    comm.all_reduce(std::span<float>(data), ReduceOp::kSum, algorithm);
    comm.set_trace(nullptr);
  });
  trace.write_json(path);
  trace.write_table(path + ".tsv");
  return trace.events().size();
}

}  // namespace

void trace_section(const StageOptions& options) {
  if (options.trace.empty()) return;
  const std::string& path = options.trace;
  const std::string fused = path + ".fused.json";
  const std::size_t plain_events = trace_one(options.ranks, Algorithm::kRing, path);
  const std::size_t fused_events = trace_one(options.ranks, Algorithm::kRingFused, fused);
  std::printf(
      "wrote %s (%zu events) and %s (%zu events): a 4 MiB ring and fused-ring all-reduce on %d "
      "ranks; open them in https://ui.perfetto.dev, or plot the .tsv next to each with trace.gp\n",
      path.c_str(), plain_events, fused.c_str(), fused_events, options.ranks);
}

}  // namespace book::coll::stage
