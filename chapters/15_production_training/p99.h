/// @file
/// Throughput against P99, on chapter 11's simulated clock: the serving trade-off a production
/// team has to judge, measured on the workload chapter 11's stage serves (serving_workload.h),
/// so the numbers are chapter 11's and are the same on every machine. Three comparisons:
/// a bigger batch (max running 32 -> 64) buys capacity and loses the SLO; an SLO-driven admission
/// threshold (chapter 11's fix 1) on the bigger batch keeps P99 TPOT within the SLO for part of
/// that capacity; continuous batching against static batching.
///
/// Every configuration is measured as chapter 11's sweep measures it: its capacity (every request
/// there at t = 0), then the same requests as a Poisson stream at kServingLoad of that capacity,
/// the load an operator would run it at, where the SLO is judged.
#pragma once

#include <string>

#include "chapters/11_continuous_batching/metrics.h"
#include "chapters/11_continuous_batching/serving_workload.h"

namespace book::prod {

/// The online load, as a fraction of each configuration's own capacity (chapter 11's sweep's).
inline constexpr double kServingLoad = 0.9;
/// The smaller max running of comparison 1 (chapter 11's sweep: 32 -> 64 is +29% capacity).
inline constexpr int kSmallerBatch = 32;
/// The bigger max running; also the static batch of comparison 3.
inline constexpr int kBiggerBatch = 64;
/// Tokens per step of every continuous configuration (the sweep's smaller budget).
inline constexpr int kTokenBudget = 512;
/// How far below the TPOT SLO the admission threshold of comparison 2 caps a step. The threshold
/// models the running batch's decode step before admitting; the step then run also reads the
/// prefill chunk's keys and pays for its attention, which the model leaves out, and a batch already
/// past the cap finishes at its size: capped at the SLO itself, the P99 TPOT lands just above it.
inline constexpr double kThresholdMarginMs = 1;

/// One configuration: its capacity, then served online at kServingLoad of it.
struct ServingPoint {
  std::string config;                ///< what ran, e.g. "continuous, max 64 running, 512 tok/step"
  double capacity_tokens_per_s = 0;  ///< output tokens/s with every request at t = 0
  double rate = 0;                   ///< requests/s offered online (kServingLoad of capacity)
  serve::ServingSummary online;      ///< the online run under serve::kStageSlo
};

/// The three comparisons, each configuration once.
struct ThroughputAgainstP99 {
  int requests = 0;                   ///< requests in the workload
  serve::Slo slo;                     ///< the SLO judged (serve::kStageSlo)
  ServingPoint smaller_batch;         ///< 1: continuous, kSmallerBatch running
  ServingPoint bigger_batch;          ///< 1: continuous, kBiggerBatch running
  ServingPoint threshold_at_slo;      ///< 2: kBiggerBatch, admitting while a step stays <= the SLO
  ServingPoint threshold;             ///< 2: the same, kThresholdMarginMs below the SLO
  ServingPoint static_batches;        ///< 3: static batches of kBiggerBatch
  double continuous_over_static = 0;  ///< 3: bigger_batch's capacity / static_batches'
};

/// Runs the three comparisons on `requests` requests (chapter 11's stage: 1000) of chapter 11's
/// stage workload (its seed, its cost model, its SLO). Deterministic: the clock is simulated.
/// Throws book::Error if requests < 100 (a P99 over fewer requests is their maximum, not a tail).
ThroughputAgainstP99 throughput_against_p99(int requests = serve::kStageRequests);

}  // namespace book::prod
