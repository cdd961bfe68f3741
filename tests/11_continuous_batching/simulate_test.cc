// Scaffolding tests (on the reference bodies): percentiles and the serving summary, seeded
// arrivals, and the simulator's counted quantities — rows run, padding, recomputation — for the
// continuous engine and its peers, static batching and one request at a time.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "chapters/11_continuous_batching/arrivals.h"
#include "chapters/11_continuous_batching/metrics.h"
#include "chapters/11_continuous_batching/simulate.h"
#include "common/testing/expect_error.h"

namespace book::serve {
namespace {

using book::testing::expect_error;

TEST(Metrics, NearestRankPercentiles) {
  std::vector<double> v;
  for (int i = 100; i >= 1; --i) v.push_back(i);  // 1..100, shuffled order does not matter
  EXPECT_EQ(percentile(v, 50), 50);
  EXPECT_EQ(percentile(v, 90), 90);
  EXPECT_EQ(percentile(v, 99), 99);
  EXPECT_EQ(percentile(v, 100), 100);
  EXPECT_EQ(percentile({7, 3, 5}, 50), 5);
  EXPECT_EQ(percentile({7, 3, 5}, 1), 3);
  expect_error([] { percentile({}, 50); }, "no values");
  expect_error([] { percentile({1}, 0); }, {"p must be in (0, 100]", "0"});
}

TEST(Metrics, SummaryCountsThroughputLatencyAndGoodput) {
  // Three requests over 4 s: TTFTs 0.5, 1, 3 s; TPOTs 50, 100, 0 (one token) ms.
  const std::vector<RequestTiming> t = {
      {0, 500, 1500, 10, 21}, {1000, 2000, 3000, 10, 11}, {2000, 5000, 4000 + 0 * 1, 10, 1}};
  expect_error([&] { summarize(t, {}); }, {"request 2 is out of order", "finish 4000"});
  std::vector<RequestTiming> ok = t;
  ok[2].finish_ms = 5000;
  const ServingSummary s = summarize(ok, {2000, 60});
  EXPECT_EQ(s.requests, 3);
  EXPECT_DOUBLE_EQ(s.duration_s, 5.0);
  EXPECT_DOUBLE_EQ(s.tokens_per_s, 33 / 5.0);
  EXPECT_DOUBLE_EQ(s.ttft_p50, 1000);
  EXPECT_DOUBLE_EQ(s.ttft_p99, 3000);
  EXPECT_DOUBLE_EQ(s.tpot_p99, 100) << "the one-token request has no TPOT";
  EXPECT_DOUBLE_EQ(s.slo_attained, 1.0 / 3) << "only request 0 meets TTFT <= 2 s and TPOT <= 60";
  EXPECT_DOUBLE_EQ(s.goodput, 1 / 5.0);
}

std::vector<kv::Request> lengths(int n, std::uint64_t seed = 3) {
  kv::WorkloadOptions w;
  w.requests = n;
  w.seed = seed;
  w.max_len = 1024;
  w.prompt_median = 60;
  w.output_median = 80;
  w.multimodal_fraction = 0;
  return kv::make_workload(w);
}

TEST(Arrivals, SeededPoissonAndBurstyGammaHaveTheRequestedRate) {
  const auto requests = lengths(4000);
  for (const double shape : {1.0, 0.25}) {
    const auto timed = with_arrivals(requests, {8, shape, 5});
    EXPECT_EQ(with_arrivals(requests, {8, shape, 5})[1234].arrival_ms, timed[1234].arrival_ms)
        << "seeded";
    const double mean_gap = timed.back().arrival_ms / (timed.size() - 1);
    EXPECT_NEAR(mean_gap, 125, 125 * 0.1)
        << "8 requests/s: gaps of 125 ms on average, shape " << shape;
    double var = 0;
    for (std::size_t i = 1; i < timed.size(); ++i) {
      const double gap = timed[i].arrival_ms - timed[i - 1].arrival_ms;
      var += (gap - mean_gap) * (gap - mean_gap);
    }
    const double cv = std::sqrt(var / (timed.size() - 1)) / mean_gap;
    EXPECT_NEAR(cv, 1 / std::sqrt(shape), 0.2 / std::sqrt(shape))
        << "Gamma(shape) gaps have a coefficient of variation 1/sqrt(shape)";
    EXPECT_EQ(timed[17].prompt_tokens, static_cast<int>(requests[17].prompt.size()));
  }
  expect_error([&] { with_arrivals(requests, {0, 1, 1}); }, {"rate", "0"});
  expect_error([&] { with_arrivals(requests, {1, -1, 1}); }, {"gamma_shape", "-1"});
}

// Review of issue 19: an infinite shape made the gamma sampler compare against NaN forever.
TEST(Arrivals, InfiniteOrNaNRatesAndShapesAreRefusedNotLoopedOn) {
  const auto requests = lengths(4);
  expect_error(
      [&] {
        with_arrivals(requests, {4, INFINITY, 1});
      },
      "with_arrivals: gamma_shape must be finite and > 0 (1 is Poisson), got inf");
  expect_error(
      [&] {
        with_arrivals(requests, {INFINITY, 1, 1});
      },
      "with_arrivals: rate must be finite and > 0 requests/s, got inf");
  expect_error([&] { with_arrivals(requests, {NAN, 1, 1}); }, "rate must be finite");
  expect_error([&] { with_arrivals(requests, {4, NAN, 1}); }, "gamma_shape must be finite");
}

TEST(Simulate, ContinuousRunsEveryUsefulRowOnceWithoutPreemption) {
  const auto timed = with_arrivals(lengths(300), {20, 1, 7});
  ContinuousOptions options;
  options.scheduler = {16, 128, true};
  const SimResult r = simulate_continuous(timed, options, CostModel{});
  EXPECT_EQ(r.preemptions, 0) << "4096 blocks of 16 hold 16 requests of <= 1024 tokens";
  EXPECT_EQ(r.rows, r.useful_rows) << "no padding, no recomputation";
  ASSERT_EQ(r.timings.size(), timed.size());
  for (std::size_t i = 0; i < timed.size(); ++i) {
    EXPECT_GE(r.timings[i].first_token_ms, timed[i].arrival_ms) << "request " << i;
    EXPECT_GE(r.timings[i].finish_ms, r.timings[i].first_token_ms) << "request " << i;
  }
  for (const StepSample& s : r.steps) {
    EXPECT_LE(s.decode_rows + s.prefill_rows, 128);
    EXPECT_LE(s.running, 16);
  }
}

// The stage's wall-clock workload (512 requests of scaled_lengths at context 256, seed 10, all at
// t = 0) is long-tailed enough for static batching's wait on its longest member to show: on the
// simulated clock continuous batching serves at least twice static's tokens/s in half its steps.
// The stopwatch's ratio on a CPU is the stage's to measure, not a test's.
TEST(Simulate, WallClockWorkloadIsLongTailedEnoughForTwiceStatic) {
  const auto lengths = kv::make_workload(scaled_lengths(512, 10, 256, 64));
  std::vector<int> outputs;
  for (const kv::Request& r : lengths) outputs.push_back(r.output_tokens);
  std::sort(outputs.begin(), outputs.end());
  EXPECT_GE(outputs[outputs.size() * 99 / 100], 5 * outputs[outputs.size() / 2])
      << "P99 output over median: a long tail";
  auto timed = with_arrivals(lengths, {1, 1, 11});
  for (TimedRequest& t : timed) t.arrival_ms = 0;
  ContinuousOptions options;
  options.scheduler = {64, 512, true};
  options.max_positions = 256;
  const SimResult continuous = simulate_continuous(timed, options, CostModel{});
  const SimResult fixed_batches = simulate_static(timed, 64, CostModel{});
  EXPECT_LE(2 * continuous.steps.size(), fixed_batches.steps.size())
      << "static batches of 64 wait for each batch's longest member";
  EXPECT_GE(summarize(continuous.timings, Slo{}).tokens_per_s,
            2 * summarize(fixed_batches.timings, Slo{}).tokens_per_s);
  expect_error([] { scaled_lengths(8, 1, 8, 64); }, {"scaled_lengths", "context", "8"});
}

TEST(Simulate, TightCacheRecomputesWhatItPreempted) {
  const auto timed = with_arrivals(lengths(200), {50, 1, 7});
  ContinuousOptions options;
  options.scheduler = {32, 256, true};
  options.kv_blocks = 80;  // 1280 slots for 32 requests
  const SimResult r = simulate_continuous(timed, options, CostModel{});
  EXPECT_GT(r.preemptions, 0);
  EXPECT_GT(r.rows, r.useful_rows) << "preempted requests' tokens are run again";
  std::int64_t counted = 0, preempted = 0;
  for (const StepSample& s : r.steps) counted += s.decode_rows + s.prefill_rows;
  for (const StepSample& s : r.steps) preempted += s.preempted;
  EXPECT_EQ(counted, r.rows);
  EXPECT_EQ(preempted, r.preemptions);
}

TEST(Simulate, StaticBatchingPadsToTheLongestMember) {
  // Two requests arriving together: prompts 3 and 5, outputs 2 and 4, one batch.
  const std::vector<TimedRequest> two = {{0, 0, 3, 2}, {1, 0, 5, 4}};
  const CostModel unit{1, 0, 0, 0};  // every step costs 1 ms
  const SimResult r = simulate_static(two, 8, unit);
  ASSERT_EQ(r.steps.size(), 4u) << "one prefill, then 3 decodes for the 4-token output";
  EXPECT_EQ(r.steps[0].prefill_rows, 8);
  EXPECT_EQ(r.steps[0].padding_rows, 2) << "the 3-token prompt padded to 5";
  EXPECT_EQ(r.steps[1].decode_rows, 2);
  EXPECT_EQ(r.steps[2].decode_rows, 1);
  EXPECT_EQ(r.steps[2].padding_rows, 1) << "the 2-token output is done: padding";
  EXPECT_EQ(r.rows, 10 + 3 * 2);
  EXPECT_EQ(r.useful_rows, (3 + 2 - 1) + (5 + 4 - 1));
  EXPECT_EQ(r.timings[0].finish_ms, 4) << "the short one waits for the long one";
  EXPECT_EQ(r.timings[0].first_token_ms, 1);
  const SimResult one = simulate_static(two, 1, unit);
  EXPECT_EQ(one.timings[0].finish_ms, 2);
  EXPECT_EQ(one.timings[1].finish_ms, 2 + 4);
  EXPECT_EQ(one.rows, one.useful_rows) << "a batch of one has no padding";
  expect_error([&] { simulate_static(two, 0, unit); }, {"max_batch", "0"});
}

TEST(Simulate, LanesSplitByTokensAndKeepArrivalOrder) {
  const auto timed = with_arrivals(lengths(400), {12, 1, 9});
  const int threshold = balanced_lane_threshold(timed);
  std::int64_t below = 0, above = 0;
  for (const auto& r : timed)
    (r.prompt_tokens + r.output_tokens > threshold ? above : below) +=
        r.prompt_tokens + r.output_tokens;
  EXPECT_GE(2 * below, below + above) << "the short lane holds at least half the work";
  ContinuousOptions options;
  options.scheduler = {16, 256, true};
  const auto [alternating, lanes] = simulate_lanes(timed, options, CostModel{}, threshold);
  ASSERT_EQ(lanes.timings.size(), timed.size());
  for (std::size_t i = 0; i < timed.size(); ++i) {
    EXPECT_EQ(lanes.timings[i].arrival_ms, timed[i].arrival_ms) << "request " << i;
    EXPECT_EQ(alternating.timings[i].prompt_tokens, timed[i].prompt_tokens) << "request " << i;
  }
  EXPECT_EQ(lanes.useful_rows, alternating.useful_rows);
}

TEST(Simulate, SloThresholdStopsAdmittingAtTheSlo) {
  const auto timed = with_arrivals(lengths(300), {40, 1, 4});
  ContinuousOptions options;
  options.scheduler = {128, 2048, true};
  const CostModel cost;
  const SimResult plain = simulate_continuous(timed, options, cost);
  options.step_slo_ms = 15;
  const SimResult capped = simulate_continuous(timed, options, cost);
  auto most_running = [](const SimResult& r) {
    int most = 0;
    for (const auto& s : r.steps) most = std::max(most, s.running);
    return most;
  };
  const double plain_itl = inter_token_percentile(plain, 99);
  const double capped_itl = inter_token_percentile(capped, 99);
  EXPECT_GT(plain_itl, 20) << "without the threshold the P99 gap between tokens passes 15 ms";
  EXPECT_LT(capped_itl, plain_itl) << "with it, the P99 gap shrinks";
  EXPECT_LT(most_running(capped), most_running(plain)) << "the batch stops growing at the SLO";
  EXPECT_EQ(capped.timings.size(), timed.size());
  EXPECT_EQ(capped.rows, capped.useful_rows);
}

// Review of issue 19: an SLO of 10^9 ms left room for ~2·10^10 rows; converting that double to
// int was undefined (INT_MIN on x86), which set the token budget to max_running (128 here) and
// silently changed every step. An SLO that never binds must leave the run as it was.
TEST(Simulate, AnSloThatNeverBindsLeavesTheRunUnchanged) {
  const auto timed = with_arrivals(lengths(300), {40, 1, 4});
  ContinuousOptions options;
  options.scheduler = {128, 2048, true};
  const SimResult plain = simulate_continuous(timed, options, CostModel{});
  options.step_slo_ms = 1e9;
  const SimResult loose = simulate_continuous(timed, options, CostModel{});
  ASSERT_EQ(loose.steps.size(), plain.steps.size()) << "SLO 1e9 ms, budget 2048 tokens";
  for (std::size_t i = 0; i < plain.steps.size(); ++i)
    ASSERT_EQ(loose.steps[i].prefill_rows, plain.steps[i].prefill_rows) << "step " << i;
}

TEST(Simulate, BadArrivalTimesAndCostModelsAreRefusedNotLoopedOn) {
  auto timed = with_arrivals(lengths(3), {4, 1, 1});
  timed[1].arrival_ms = NAN;  // never <= now: the loop waited for it forever
  expect_error([&] { simulate_continuous(timed, {}, CostModel{}); },
               "simulate_continuous: request 1 arrives at nan ms; arrival times must be finite "
               "and >= 0");
  expect_error([&] { simulate_static(timed, 2, CostModel{}); }, "simulate_static: request 1");
  timed[1].arrival_ms = -1;
  expect_error([&] { simulate_continuous(timed, {}, CostModel{}); }, "arrives at -1 ms");
  timed[1].arrival_ms = timed[2].arrival_ms;
  ContinuousOptions slo;
  slo.step_slo_ms = 15;
  expect_error(
      [&] {
        simulate_continuous(timed, slo, CostModel{7, 0, 0, 0});
      },
      "divides by the cost model's per_token_ms, which must then be > 0, got 0");
  expect_error(
      [&] {
        simulate_continuous(timed, {}, CostModel{7, -1, 0, 0});
      },
      "CostModel: per_token_ms must be finite and >= 0, got -1");
  expect_error(
      [&] {
        simulate_static(timed, 2, CostModel{INFINITY, 0, 0, 0});
      },
      "CostModel: step_ms must be finite and >= 0, got inf");
  EXPECT_NO_THROW(simulate_static(timed, 2, CostModel{1, 0, 0, 0}));  // per_token_ms 0: no SLO
}

}  // namespace
}  // namespace book::serve
