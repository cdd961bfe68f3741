// The argument checks and small helpers the exercises share (compiled once, in :interface).
#include "chapters/11_continuous_batching/sampling.h"
#include "chapters/11_continuous_batching/scheduler_state.h"
#include "common/enum_check.h"
#include "common/check.h"

namespace book::serve {

void check_config(const SchedulerConfig& config) {
  // PreemptionMode(7) used to be accepted.
  check_enum(config.preemption, PreemptionMode::kRecompute, PreemptionMode::kSwap,
             "serve::PreemptionMode", "scheduler");
  BOOK_CHECK(config.max_running >= 1,
             "scheduler: max_running must be >= 1, got " << config.max_running);
  BOOK_CHECK(config.token_budget >= config.max_running,
             "scheduler: token_budget (" << config.token_budget << ") must be >= max_running ("
                                         << config.max_running
                                         << ") so that every running request can decode each "
                                            "step; raise the budget or lower max_running");
  BOOK_CHECK(config.host_blocks >= 0,
             "scheduler: host_blocks must be >= 0, got " << config.host_blocks);
  BOOK_CHECK(config.preemption != PreemptionMode::kSwap || config.host_blocks >= 1,
             "scheduler: preemption by swap needs a host arena, but host_blocks is 0; give it "
             "blocks or preempt by recompute");
}

int StepPlan::tokens() const {
  int sum = 0;
  for (const auto& chunk : chunks) sum += chunk.count;
  return sum;
}

void check_sampling(const SamplingParams& params) {
  BOOK_CHECK(params.temperature >= 0,
             "sampling: temperature must be >= 0 (0 is greedy), got " << params.temperature);
  BOOK_CHECK(params.top_k >= 0, "sampling: top_k must be >= 0 (0 keeps all), got " << params.top_k);
  BOOK_CHECK(params.top_p > 0 && params.top_p <= 1,
             "sampling: top_p must be in (0, 1], got " << params.top_p);
}

double sampling_uniform(std::uint64_t seed, std::int64_t index) {
  std::uint64_t z = seed + 0x9e3779b97f4a7c15ULL * static_cast<std::uint64_t>(index + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * 0x1.0p-53;
}

}  // namespace book::serve
