/// @file
/// Disaggregation on chapter 11's simulated clock, at 7B scale: P prefill replicas and D decode
/// replicas against N colocated ones, the KV transfer priced per byte on a link.
///
/// Prefill replicas are chapter 11's continuous simulator (its real scheduler, chunked prefill)
/// serving every request with one output token: that token's time is the request's TTFT. The KV
/// of its prompt then crosses the link (latency + bytes / bandwidth; each prefill replica's link
/// carries one transfer at a time) to decode replica i % D, which runs decode-only steps priced
/// by the same CostModel (step + a row per running request + the context each reads). A decode
/// replica reserves a request's whole KV (prompt + output) when it admits it: requests that do
/// not fit wait, in arrival order; nothing is preempted. The colocated peer is N replicas of
/// chapter 11's continuous simulator, requests dealt round-robin, chunked prefill on.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "chapters/11_continuous_batching/arrivals.h"
#include "chapters/11_continuous_batching/metrics.h"
#include "chapters/11_continuous_batching/simulate.h"

namespace book::pd {

/// A link between a prefill and a decode replica.
struct LinkModel {
  std::string name;         ///< e.g. "NVLink"
  double gbytes_per_s = 0;  ///< one direction, GB/s (1e9 bytes)
  double latency_ms = 0;    ///< per transfer
  /// The time to move `bytes`.
  double transfer_ms(double bytes) const { return latency_ms + bytes / (gbytes_per_s * 1e6); }
};

/// NVLink 4 (H100 SXM): 900 GB/s bidirectional per GPU, 450 GB/s each way (NVIDIA H100 datasheet).
LinkModel nvlink_link();
/// A 200 Gb/s InfiniBand HDR / RoCE NIC per GPU: 25 GB/s (NVIDIA ConnectX-6 datasheet), the
/// cross-node path of a disaggregated deployment.
LinkModel network_link();
/// 10 Gb/s Ethernet: 1.25 GB/s, the slow link where the transfer stops being free.
LinkModel slow_link();

/// One simulated deployment.
struct SimDeployment {
  int prefill_workers = 2;             ///< P (0 with decode_workers = N: colocated)
  int decode_workers = 2;              ///< D, or N colocated replicas
  bool colocated = false;              ///< N colocated replicas instead of P + D
  serve::ContinuousOptions replica;    ///< every replica's scheduler and cache
  serve::CostModel cost;               ///< chapter 11's 7B-on-an-A100 defaults
  LinkModel link = nvlink_link();      ///< the KV's path (split only)
  double kv_bytes_per_token = 524288;  ///< 7B fp16: 2 · 32 layers · 4096 · 2 bytes
  /// "2P+2D, NVLink" or "4 colocated".
  std::string name() const;
};

/// Every request's milestones on the simulated clock (ms), in input order.
struct SimOutcome {
  std::vector<serve::RequestTiming> timings;  ///< per request
  double transfer_ms_total = 0;               ///< time the links were busy (split only)
};

/// Serves `requests` (ids 0.. in arrival order) on `deployment`. Throws book::Error if a pool has
/// size 0 (naming it), the link's bandwidth is not positive, or chapter 11's simulator refuses a
/// request.
SimOutcome simulate_deployment(const std::vector<serve::TimedRequest>& requests,
                               const SimDeployment& deployment);

/// `count` requests of exactly `prompt_tokens` prompt tokens and outputs uniform in
/// [output_min, output_max], Poisson arrivals at `rate` per second; seeded.
std::vector<serve::TimedRequest> fixed_prompt_workload(int count, int prompt_tokens, int output_min,
                                                       int output_max, double rate,
                                                       std::uint64_t seed);

}  // namespace book::pd
