#include "chapters/15_production_training/p99.h"

#include <functional>
#include <vector>

#include "chapters/11_continuous_batching/serving_workload.h"
#include "chapters/11_continuous_batching/simulate.h"
#include "common/check.h"
#include "common/table.h"

namespace book::prod {
namespace {

using Serve = std::function<serve::SimResult(const std::vector<serve::TimedRequest>&)>;

// Chapter 11's sweep's measurement: the capacity offline, then online at kServingLoad of it.
ServingPoint measure(const std::string& config, int requests, const Serve& run) {
  const serve::Slo slo = serve::kStageSlo;
  const auto offline = serve::stage_workload(requests, serve::kStageSeed, 0);
  const serve::ServingSummary capacity = serve::summarize(run(offline).timings, slo);
  ServingPoint point;
  point.config = config;
  point.capacity_tokens_per_s = capacity.tokens_per_s;
  point.rate = kServingLoad * capacity.requests_per_s;
  point.online = serve::summarize(
      run(serve::stage_workload(requests, serve::kStageSeed, point.rate)).timings, slo);
  return point;
}

// The continuous engine with `max_running` running; step_slo_ms > 0 turns on the threshold.
ServingPoint continuous(const std::string& config, int requests, int max_running,
                        double step_slo_ms) {
  serve::ContinuousOptions options = serve::stage_continuous_options(max_running, kTokenBudget);
  options.step_slo_ms = step_slo_ms;
  const serve::CostModel cost;
  return measure(config, requests, [&](const std::vector<serve::TimedRequest>& r) {
    return serve::simulate_continuous(r, options, cost);
  });
}

std::string running(int max_running) {
  return "continuous, max " + std::to_string(max_running) + " running, " +
         std::to_string(kTokenBudget) + " tok/step";
}

}  // namespace

ThroughputAgainstP99 throughput_against_p99(int requests) {
  BOOK_CHECK(requests >= 100, "throughput_against_p99: needs at least 100 requests, got "
                                  << requests
                                  << ": a P99 over fewer requests is their maximum, not a tail");
  ThroughputAgainstP99 t;
  t.requests = requests;
  t.slo = serve::kStageSlo;
  t.smaller_batch = continuous(running(kSmallerBatch), requests, kSmallerBatch, 0);
  t.bigger_batch = continuous(running(kBiggerBatch), requests, kBiggerBatch, 0);
  const double at_slo = t.slo.tpot_ms, below = t.slo.tpot_ms - kThresholdMarginMs;
  auto threshold = [&](double step_ms) {
    return "max " + std::to_string(kBiggerBatch) +
           " running, admit while a step <= " + fixed(step_ms, 0) + " ms";
  };
  t.threshold_at_slo = continuous(threshold(at_slo), requests, kBiggerBatch, at_slo);
  t.threshold = continuous(threshold(below), requests, kBiggerBatch, below);
  const serve::CostModel cost;
  t.static_batches = measure("static batches of " + std::to_string(kBiggerBatch), requests,
                             [&](const std::vector<serve::TimedRequest>& r) {
                               return serve::simulate_static(r, kBiggerBatch, cost);
                             });
  t.continuous_over_static =
      t.bigger_batch.capacity_tokens_per_s / t.static_batches.capacity_tokens_per_s;
  return t;
}

}  // namespace book::prod
