#include "chapters/11_continuous_batching/simulate.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "chapters/11_continuous_batching/scheduler.h"
#include "common/check.h"

namespace book::serve {
namespace {

// (query, key) pairs of `count` new tokens after `start` cached ones (causal).
std::int64_t attention_pairs(int start, int count) {
  return static_cast<std::int64_t>(count) * start +
         static_cast<std::int64_t>(count) * (count + 1) / 2;
}

std::int64_t useful_rows(const std::vector<TimedRequest>& requests) {
  std::int64_t rows = 0;
  for (const auto& r : requests) rows += r.prompt_tokens + r.output_tokens - 1;  // last: not run
  return rows;
}

// A NaN arrival is never <= now, and an infinite one is never reached: either would loop forever.
void check_arrivals(const char* who, const std::vector<TimedRequest>& requests) {
  for (const auto& r : requests)
    BOOK_CHECK(std::isfinite(r.arrival_ms) && r.arrival_ms >= 0,
               who << ": request " << r.id << " arrives at " << r.arrival_ms
                   << " ms; arrival times must be finite and >= 0");
}

}  // namespace

void CostModel::validate() const {
  for (const auto& [name, value] : {std::pair{"step_ms", step_ms},
                                    {"per_token_ms", per_token_ms},
                                    {"per_context_ms", per_context_ms},
                                    {"per_pair_ms", per_pair_ms}})
    BOOK_CHECK(std::isfinite(value) && value >= 0,
               "CostModel: " << name << " must be finite and >= 0, got " << value);
}

//! [simulate_continuous]
SimResult simulate_continuous(const std::vector<TimedRequest>& requests,
                              const ContinuousOptions& options, const CostModel& cost) {
  check_arrivals("simulate_continuous", requests);
  cost.validate();
  BOOK_CHECK(std::isfinite(options.step_slo_ms) && options.step_slo_ms >= 0,
             "simulate_continuous: step_slo_ms must be finite and >= 0 (0 is off), got "
                 << options.step_slo_ms);
  BOOK_CHECK(options.step_slo_ms == 0 || cost.per_token_ms > 0,
             "simulate_continuous: the SLO's token budget divides by the cost model's "
             "per_token_ms, which must then be > 0, got "
                 << cost.per_token_ms);
  kv::BlockManager blocks(options.kv_blocks, options.block_size, /*prefix_caching=*/false);
  Scheduler scheduler(blocks, options.scheduler, options.max_positions);
  SimResult result;
  result.system = "continuous";
  result.timings.resize(requests.size());
  result.useful_rows = useful_rows(requests);
  double now = 0;
  std::size_t next = 0;
  while (next < requests.size() || scheduler.has_work()) {
    for (; next < requests.size() && requests[next].arrival_ms <= now; ++next) {
      const TimedRequest& r = requests[next];
      // Ids are given in order from 0, so request i is id i. The token values do not matter.
      scheduler.add(std::vector<int>(r.prompt_tokens, 1), r.output_tokens);
      result.timings[next] = {r.arrival_ms, 0, 0, r.prompt_tokens, r.output_tokens};
    }
    if (!scheduler.has_work()) {  // idle: jump to the next arrival
      now = requests[next].arrival_ms;
      continue;
    }
    if (options.step_slo_ms > 0) {  // fix 1: the batch and the budget the SLO leaves room for
      const auto& running = scheduler.state().running;
      std::int64_t context = 0;
      for (const RequestId id : running) context += blocks.length(id);
      const int n = static_cast<int>(running.size());
      const double decode_step = cost.step_time(n, context);
      const int max_running =
          decode_step >= options.step_slo_ms ? std::max(n, 1) : options.scheduler.max_running;
      // Clamped as a double: a large SLO leaves room for more rows than an int holds, and
      // converting such a double to int is undefined (INT_MIN on x86, which set the budget to
      // max_running).
      const double room = std::floor((options.step_slo_ms - decode_step) / cost.per_token_ms);
      const int budget = static_cast<int>(
          std::clamp(n + room, 0.0, static_cast<double>(options.scheduler.token_budget)));
      scheduler.set_limits(max_running,
                           std::clamp(budget, max_running, options.scheduler.token_budget));
    }
    const StepPlan plan = scheduler.schedule();
    StepSample sample;
    sample.start_ms = now;
    std::int64_t context = 0, pairs = 0;
    int sampling = 0;
    for (const ScheduledChunk& c : plan.chunks) {
      context += c.start + c.count;  // its keys and values, read once
      pairs += attention_pairs(c.start, c.count);
      (c.decode ? sample.decode_rows : sample.prefill_rows) += c.count;
      sampling += c.samples ? 1 : 0;
    }
    sample.time_ms = cost.step_time(plan.tokens(), context, pairs);
    sample.preempted = static_cast<int>(plan.preempted.size());
    now += sample.time_ms;
    result.rows += plan.tokens();
    scheduler.record(plan, std::vector<int>(sampling, 1));
    for (const ScheduledChunk& c : plan.chunks) {
      if (!c.samples) continue;
      const Sequence& sequence = scheduler.sequence(c.id);
      RequestTiming& timing = result.timings[static_cast<std::size_t>(c.id)];
      if (sequence.generated() == 1) timing.first_token_ms = now;
      if (sequence.generated() == sequence.max_tokens) {
        timing.finish_ms = now;
        scheduler.finish(c.id);
      }
    }
    sample.running = static_cast<int>(scheduler.state().running.size());
    sample.waiting = static_cast<int>(scheduler.state().waiting.size());
    result.steps.push_back(sample);
  }
  result.preemptions = scheduler.preemptions();
  return result;
}
//! [simulate_continuous]

//! [simulate_static]
SimResult simulate_static(const std::vector<TimedRequest>& requests, int max_batch,
                          const CostModel& cost) {
  BOOK_CHECK(max_batch >= 1, "simulate_static: max_batch must be >= 1, got " << max_batch);
  check_arrivals("simulate_static", requests);
  cost.validate();
  SimResult result;
  result.system = max_batch == 1 ? "one at a time" : "static";
  result.timings.resize(requests.size());
  result.useful_rows = useful_rows(requests);
  double now = 0;
  for (std::size_t next = 0; next < requests.size();) {
    now = std::max(now, requests[next].arrival_ms);  // idle until the next arrival
    std::size_t end = next;
    int longest_prompt = 0, longest_output = 0;
    for (; end < requests.size() && end - next < static_cast<std::size_t>(max_batch) &&
           requests[end].arrival_ms <= now;
         ++end) {
      longest_prompt = std::max(longest_prompt, requests[end].prompt_tokens);
      longest_output = std::max(longest_output, requests[end].output_tokens);
    }
    const int batch = static_cast<int>(end - next);
    // Prefill, padded to the longest prompt.
    StepSample prefill{now, 0, 0, 0, 0, batch, 0, 0};
    for (std::size_t i = next; i < end; ++i) prefill.prefill_rows += requests[i].prompt_tokens;
    prefill.padding_rows = batch * longest_prompt - prefill.prefill_rows;
    prefill.time_ms = cost.step_time(batch * longest_prompt, batch * longest_prompt,
                                     batch * attention_pairs(0, longest_prompt));
    now += prefill.time_ms;
    result.rows += static_cast<std::int64_t>(batch) * longest_prompt;
    result.steps.push_back(prefill);
    const double first_token = now;
    // Decode until the longest output is done; finished members are padding.
    for (int s = 1; s < longest_output; ++s) {
      StepSample step{now, 0, 0, 0, 0, batch, 0, 0};
      for (std::size_t i = next; i < end; ++i)
        step.decode_rows += requests[i].output_tokens > s ? 1 : 0;
      step.padding_rows = batch - step.decode_rows;
      const int length = longest_prompt + s;  // padded: every member reads the longest
      step.time_ms =
          cost.step_time(batch, std::int64_t{batch} * length, std::int64_t{batch} * length);
      now += step.time_ms;
      result.rows += batch;
      result.steps.push_back(step);
    }
    for (std::size_t i = next; i < end; ++i) {
      const TimedRequest& r = requests[i];
      result.timings[i] = {r.arrival_ms, first_token, now, r.prompt_tokens, r.output_tokens};
    }
    next = end;
  }
  return result;
}
//! [simulate_static]

std::pair<SimResult, SimResult> simulate_lanes(const std::vector<TimedRequest>& requests,
                                               const ContinuousOptions& options,
                                               const CostModel& cost, int threshold) {
  auto serve_split = [&](auto lane_of, const char* name) {
    std::vector<TimedRequest> lanes[2];
    std::vector<std::pair<int, std::size_t>> where(requests.size());  // lane, index in it
    for (std::size_t i = 0; i < requests.size(); ++i) {
      const int lane = lane_of(i);
      where[i] = {lane, lanes[lane].size()};
      lanes[lane].push_back(requests[i]);
    }
    SimResult merged;
    merged.system = name;
    SimResult served[2];
    for (int lane = 0; lane < 2; ++lane) {
      if (lanes[lane].empty()) continue;
      served[lane] = simulate_continuous(lanes[lane], options, cost);
      merged.preemptions += served[lane].preemptions;
      merged.rows += served[lane].rows;
      merged.useful_rows += served[lane].useful_rows;
      merged.steps.insert(merged.steps.end(), served[lane].steps.begin(), served[lane].steps.end());
    }
    for (std::size_t i = 0; i < requests.size(); ++i)
      merged.timings.push_back(served[where[i].first].timings[where[i].second]);
    return merged;
  };
  return {serve_split([](std::size_t i) { return static_cast<int>(i % 2); },
                      "two replicas, alternating"),
          serve_split(
              [&](std::size_t i) {
                return requests[i].prompt_tokens + requests[i].output_tokens > threshold ? 1 : 0;
              },
              "two replicas, fast/slow lanes")};
}

double inter_token_percentile(const SimResult& result, double p) {
  BOOK_CHECK(p > 0 && p <= 100, "inter_token_percentile: p must be in (0, 100], got " << p);
  std::vector<std::pair<double, int>> gaps;  // step time, decode rows
  std::int64_t total = 0;
  for (const StepSample& s : result.steps)
    if (s.decode_rows > 0) {
      gaps.emplace_back(s.time_ms, s.decode_rows);
      total += s.decode_rows;
    }
  BOOK_CHECK(total > 0, "inter_token_percentile: no step decoded anything");
  std::sort(gaps.begin(), gaps.end());
  const auto rank = static_cast<std::int64_t>(std::ceil(p / 100 * static_cast<double>(total)));
  std::int64_t seen = 0;
  for (const auto& [time, rows] : gaps)
    if ((seen += rows) >= rank) return time;
  return gaps.back().first;
}

int balanced_lane_threshold(const std::vector<TimedRequest>& requests) {
  BOOK_CHECK(!requests.empty(), "balanced_lane_threshold: no requests");
  std::vector<int> sizes;
  std::int64_t total = 0;
  for (const auto& r : requests) {
    sizes.push_back(r.prompt_tokens + r.output_tokens);
    total += sizes.back();
  }
  std::sort(sizes.begin(), sizes.end());
  std::int64_t sum = 0;
  for (const int size : sizes) {
    sum += size;
    if (2 * sum >= total) return size;
  }
  return sizes.back();
}

}  // namespace book::serve
