/// @file
/// Serving a timed workload on a simulated clock: the real scheduler (scheduler.h, on chapter
/// 10's BlockManager) decides every step, and a cost model, not a stopwatch, says how long the
/// step took. Nothing is computed, so thousands of requests of a 7B-sized model replay in a
/// second, the same on every machine however loaded: the counted rows and KV reads are exact, the
/// milliseconds are the cost model's. The peers: static batching (a batch runs until its longest
/// member finishes, then the next batch starts) and one request at a time.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "chapters/11_continuous_batching/arrivals.h"
#include "chapters/11_continuous_batching/metrics.h"
#include "chapters/11_continuous_batching/scheduler_state.h"

namespace book::serve {

/// How long one model step takes: a fixed part (reading every weight once: a decode step is
/// memory-bound), a part per new token (the GEMMs' arithmetic), a part per cached key/value
/// position each scheduled sequence reads once (memory-bound), and a part per (query, key) pair
/// of attention's arithmetic (what makes a long prefill quadratic). The defaults are a
/// 7B-parameter fp16 model on one A100-class GPU: 14 GB of weights at ~2 TB/s ≈ 7 ms; 14 GFLOP
/// per token at ~280 TFLOP/s ≈ 0.05 ms; 0.5 MB of K/V per position at ~2 TB/s ≈ 0.25 µs;
/// 4 · 32 layers · 4096 FLOP per pair ≈ 2 ns. A roofline sketch, its parts added, not overlapped.
struct CostModel {
  double step_ms = 7.0;             ///< per step
  double per_token_ms = 0.05;       ///< per new token (row)
  double per_context_ms = 0.00025;  ///< per key/value position read
  double per_pair_ms = 0.000002;    ///< per (query, key) pair of attention
  /// The step's time for `rows` new tokens, `context` positions read and `pairs` pairs.
  double step_time(int rows, std::int64_t context, std::int64_t pairs = 0) const {
    return step_ms + per_token_ms * rows + per_context_ms * static_cast<double>(context) +
           per_pair_ms * static_cast<double>(pairs);
  }
  /// Throws book::Error naming the first part that is negative, NaN or infinite.
  void validate() const;
};

/// One step of a simulated run, for the batch-composition picture.
struct StepSample {
  double start_ms = 0;   ///< when the step began
  double time_ms = 0;    ///< how long it took
  int decode_rows = 0;   ///< requests decoding
  int prefill_rows = 0;  ///< prompt positions prefilled (recomputation included)
  int padding_rows = 0;  ///< rows of static batching's padding (finished members, short prompts)
  int running = 0;       ///< requests in the batch
  int waiting = 0;       ///< requests arrived and waiting
  int preempted = 0;     ///< requests preempted by the step
};

/// What a simulated run produced.
struct SimResult {
  std::string system;                  ///< e.g. "continuous, max 64 running, 512 tokens/step"
  std::vector<RequestTiming> timings;  ///< per request, in arrival order
  std::vector<StepSample> steps;       ///< per step
  std::int64_t preemptions = 0;        ///< requests preempted (continuous only)
  std::int64_t rows = 0;               ///< model rows run, padding and recomputation included
  std::int64_t useful_rows = 0;        ///< prompt + output tokens of the requests, each once
};

/// The continuous engine's settings in the simulation.
struct ContinuousOptions {
  SchedulerConfig scheduler;  ///< max running, token budget, chunked prefill
  int kv_blocks = 4096;       ///< the KV cache (4096 × 16 tokens × 0.5 MB ≈ 32 GB at 7B)
  int block_size = 16;        ///< tokens per block
  int max_positions = 4096;   ///< the model's context
  /// The SLO-driven threshold (fix 1 of P99): when > 0, before each step the scheduler admits no
  /// new request once the running batch's decode step is modelled to take this long, and the
  /// token budget shrinks to what keeps the step within it (never below one row per running
  /// request): every step, hence every token's gap, stays near the TPOT SLO.
  double step_slo_ms = 0;
};

/// Serves `requests` with the continuous scheduler. Throws book::Error on a request that can
/// never run (scheduler.h's checks), an arrival time that is negative, NaN or infinite, a cost
/// model that is not valid (with step_slo_ms > 0 also per_token_ms = 0) or options out of range.
SimResult simulate_continuous(const std::vector<TimedRequest>& requests,
                              const ContinuousOptions& options, const CostModel& cost);

/// Serves `requests` by static batching: whenever the server is idle it takes up to `max_batch`
/// requests that have arrived, prefills them together (padded to the longest prompt) and decodes
/// all of them (padded) until the longest output is done; every member's answer returns at the
/// batch's end. max_batch = 1 is one request at a time. Throws book::Error if max_batch < 1, an
/// arrival time is negative, NaN or infinite or the cost model is not valid.
SimResult simulate_static(const std::vector<TimedRequest>& requests, int max_batch,
                          const CostModel& cost);

/// Fix 2 of P99, fast and slow lanes: two replicas, requests of at most `threshold` tokens
/// (prompt + output) to the first and the rest to the second, against the same two replicas fed
/// alternately. Returns {alternating, lanes}, each with every request's timing in arrival order.
std::pair<SimResult, SimResult> simulate_lanes(const std::vector<TimedRequest>& requests,
                                               const ContinuousOptions& options,
                                               const CostModel& cost, int threshold);

/// The p-th percentile (0 < p <= 100) of the gaps between a request's consecutive tokens (the
/// inter-token latency, ITL): every decode row of a step waited that step's time, so the steps'
/// times weighted by their decode rows. The tail TPOT hides: one long prefill chunk stalls every
/// decode beside it for one step, which a request's mean gap averages away. Static batching's
/// gaps count its decode steps only. Throws book::Error if no step decoded.
double inter_token_percentile(const SimResult& result, double p);

/// The token count that splits `requests` into two halves of equal total work (prompt + output
/// tokens): the lanes' threshold.
int balanced_lane_threshold(const std::vector<TimedRequest>& requests);

}  // namespace book::serve
