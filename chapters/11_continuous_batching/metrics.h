/// @file
/// Serving metrics from per-request timings: throughput, time to first token (TTFT), time per
/// output token (TPOT), end-to-end latency, their percentiles, and goodput under an SLO.
#pragma once

#include <vector>

namespace book::serve {

/// When one request's milestones happened (milliseconds of the clock that served it).
struct RequestTiming {
  double arrival_ms = 0;      ///< it arrived
  double first_token_ms = 0;  ///< its first token was sampled
  double finish_ms = 0;       ///< its last token was sampled (or returned, for static batching)
  int prompt_tokens = 0;      ///< its prompt
  int output_tokens = 1;      ///< tokens it generated

  double ttft_ms() const { return first_token_ms - arrival_ms; }  ///< time to first token
  double e2e_ms() const { return finish_ms - arrival_ms; }        ///< end to end
  /// Mean time between its output tokens after the first (0 for a single token).
  double tpot_ms() const;
};

/// A latency objective: a request is good when it meets both.
struct Slo {
  double ttft_ms = 2000;  ///< time to first token at most
  double tpot_ms = 100;   ///< time per output token at most
};

/// The nearest-rank percentile `p` (0 < p <= 100) of `values`: the smallest value with at least
/// p% of them at or below it. Throws book::Error if values is empty or p is out of range.
double percentile(std::vector<double> values, double p);

/// What a run measured.
struct ServingSummary {
  int requests = 0;           ///< served
  double duration_s = 0;      ///< first arrival to last finish
  double requests_per_s = 0;  ///< requests / duration
  double tokens_per_s = 0;    ///< output tokens / duration
  double goodput = 0;         ///< requests meeting the SLO, per second
  double slo_attained = 0;    ///< fraction of requests meeting the SLO
  double ttft_p50 = 0;        ///< time to first token, P50, ms
  double ttft_p90 = 0;        ///< time to first token, P90, ms
  double ttft_p99 = 0;        ///< time to first token, P99, ms
  double tpot_p50 = 0;        ///< time per output token, P50, ms (requests of > 1 token)
  double tpot_p90 = 0;        ///< time per output token, P90, ms
  double tpot_p99 = 0;        ///< time per output token, P99, ms
  double e2e_p50 = 0;         ///< end-to-end latency, P50, ms
  double e2e_p90 = 0;         ///< end-to-end latency, P90, ms
  double e2e_p99 = 0;         ///< end-to-end latency, P99, ms
};

/// The summary of `timings` under `slo`. Throws book::Error if timings is empty or a timing is
/// out of order (first token before arrival, finish before first token).
ServingSummary summarize(const std::vector<RequestTiming>& timings, const Slo& slo);

}  // namespace book::serve
