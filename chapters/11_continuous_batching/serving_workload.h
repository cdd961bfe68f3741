/// @file
/// The serve_bench stage's workload, its SLO and its continuous engine's settings in one place,
/// so that whatever reuses the stage's numbers (chapter 15's "Throughput against P99" section and
/// its tests) serves exactly the requests the stage serves. serve_bench's flags start from these
/// defaults; its sections build every workload through stage_workload().
#pragma once

#include <cstdint>
#include <vector>

#include "chapters/11_continuous_batching/arrivals.h"
#include "chapters/11_continuous_batching/metrics.h"
#include "chapters/11_continuous_batching/simulate.h"

namespace book::serve {

/// The stage's request count (--requests).
inline constexpr int kStageRequests = 1000;
/// The stage's seed for the lengths (--seed); the arrivals use kStageSeed + 1.
inline constexpr std::int64_t kStageSeed = 10;
/// The stage's SLO (--slo-ttft-ms, --slo-tpot-ms): the first token within 2 s, then at most 15 ms
/// per output token.
inline constexpr Slo kStageSlo{2000, 15};
/// The context the stage's lengths are drawn for, and its engine's max_positions.
inline constexpr int kStageContext = 2048;

/// The stage's workload: `requests` of chapter 10's ShareGPT-like lengths (make_workload's
/// defaults: log-normal, medians 100 and 200 tokens, 2% image-sized prompts, context 2048) from
/// `seed`, arriving at `rate` requests/s (gaps ~ Gamma(gamma_shape), seed + 1); rate <= 0 is
/// offline, every request at t = 0 (a capacity run). Throws book::Error (make_workload's and
/// with_arrivals' checks) for a request count below 1 or a gamma_shape that is not finite and > 0.
std::vector<TimedRequest> stage_workload(int requests, std::int64_t seed, double rate,
                                         double gamma_shape = 1);

/// The stage's continuous engine: `max_running` requests, `token_budget` tokens per step, chunked
/// prefill, `kv_blocks` KV blocks of 16 tokens, a kStageContext-position model.
ContinuousOptions stage_continuous_options(int max_running, int token_budget, int kv_blocks = 4096);

}  // namespace book::serve
