#include "chapters/11_continuous_batching/serving_workload.h"

#include "chapters/10_paged_attention/workload.h"

namespace book::serve {

std::vector<TimedRequest> stage_workload(int requests, std::int64_t seed, double rate,
                                         double gamma_shape) {
  kv::WorkloadOptions w;  // the vLLM paper's ShareGPT-like shape (chapter 10)
  w.requests = requests;
  w.seed = static_cast<std::uint64_t>(seed);
  auto timed = with_arrivals(kv::make_workload(w), {rate > 0 ? rate : 1, gamma_shape,
                                                    static_cast<std::uint64_t>(seed) + 1});
  if (rate <= 0)
    for (auto& r : timed) r.arrival_ms = 0;  // offline: every request there at t = 0
  return timed;
}

ContinuousOptions stage_continuous_options(int max_running, int token_budget, int kv_blocks) {
  ContinuousOptions c;
  c.scheduler = {max_running, token_budget, true};
  c.kv_blocks = kv_blocks;
  c.max_positions = kStageContext;
  return c;
}

}  // namespace book::serve
