// The simulated clock for disaggregation: chapter 11's simulator for prefill and colocated
// replicas, a decode-only loop for decode replicas, a link in between. See pd_sim.h.
#include "chapters/13_disaggregation_speculation/pd/pd_sim.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <sstream>

#include "common/check.h"
#include "common/rng.h"

namespace book::pd {
namespace {

// Requests dealt round-robin to `n` replicas: replica r gets i % n == r, ids renumbered 0.. (the
// simulator wants them in arrival order).
std::vector<std::vector<serve::TimedRequest>> deal(const std::vector<serve::TimedRequest>& all,
                                                   int n) {
  std::vector<std::vector<serve::TimedRequest>> out(n);
  for (std::size_t i = 0; i < all.size(); ++i) {
    auto& mine = out[i % n];
    serve::TimedRequest r = all[i];
    r.id = static_cast<int>(mine.size());
    mine.push_back(r);
  }
  return out;
}

// A request on a decode replica: its KV is there from `ready_ms`.
struct DecodeJob {
  std::size_t index = 0;
  double ready_ms = 0;
  int context = 0;  // positions in its KV
  int left = 0;     // tokens still to generate
  int blocks = 0;   // reserved for its whole life
};

// Decode-only steps on one replica: admit what is ready and fits (arrival order), run one token
// for every running request per step, priced by the cost model. Returns nothing; writes finish.
void decode_replica(std::vector<DecodeJob> jobs, const SimDeployment& d,
                    std::vector<serve::RequestTiming>& timings) {
  std::sort(jobs.begin(), jobs.end(),
            [](const DecodeJob& a, const DecodeJob& b) { return a.ready_ms < b.ready_ms; });
  std::deque<DecodeJob> queue(jobs.begin(), jobs.end());
  std::vector<DecodeJob> running;
  int free_blocks = d.replica.kv_blocks;
  double now = 0;
  while (!queue.empty() || !running.empty()) {
    while (!queue.empty() && queue.front().ready_ms <= now &&
           static_cast<int>(running.size()) < d.replica.scheduler.max_running &&
           queue.front().blocks <= free_blocks) {
      free_blocks -= queue.front().blocks;
      running.push_back(queue.front());
      queue.pop_front();
    }
    if (running.empty()) {  // idle until the next transfer lands
      now = std::max(now, queue.front().ready_ms);
      continue;
    }
    std::int64_t context = 0;
    for (const DecodeJob& j : running) context += j.context + 1;
    now += d.cost.step_time(static_cast<int>(running.size()), context, context);
    for (DecodeJob& j : running) {
      ++j.context;
      if (--j.left == 0) {
        timings[j.index].finish_ms = now;
        free_blocks += j.blocks;
      }
    }
    std::erase_if(running, [](const DecodeJob& j) { return j.left == 0; });
  }
}

}  // namespace

LinkModel nvlink_link() { return {"NVLink", 450, 0.005}; }
LinkModel network_link() { return {"200G IB", 25, 0.02}; }
LinkModel slow_link() { return {"10G Ethernet", 1.25, 0.05}; }

std::string SimDeployment::name() const {
  std::ostringstream out;
  if (colocated)
    out << decode_workers << " colocated"
        << (replica.scheduler.chunked_prefill ? ", chunked" : ", whole prompts");
  else
    out << prefill_workers << "P+" << decode_workers << "D, " << link.name;
  return out.str();
}

SimOutcome simulate_deployment(const std::vector<serve::TimedRequest>& requests,
                               const SimDeployment& d) {
  SimOutcome outcome;
  outcome.timings.resize(requests.size());
  if (d.colocated) {
    BOOK_CHECK(d.decode_workers >= 1,
               "simulate_deployment: " << d.decode_workers << " colocated replicas, need >= 1");
    const auto parts = deal(requests, d.decode_workers);
    for (int r = 0; r < d.decode_workers; ++r) {
      if (parts[r].empty()) continue;
      const serve::SimResult sim = serve::simulate_continuous(parts[r], d.replica, d.cost);
      for (std::size_t k = 0; k < parts[r].size(); ++k)
        outcome.timings[k * d.decode_workers + r] = sim.timings[k];
    }
    return outcome;
  }
  BOOK_CHECK(d.prefill_workers >= 1, "simulate_deployment: prefill_workers = "
                                         << d.prefill_workers << ": the prefill pool is empty");
  BOOK_CHECK(d.decode_workers >= 1, "simulate_deployment: decode_workers = "
                                        << d.decode_workers << ": the decode pool is empty");
  BOOK_CHECK(d.link.gbytes_per_s > 0 && std::isfinite(d.link.gbytes_per_s),
             "simulate_deployment: link bandwidth " << d.link.gbytes_per_s << " GB/s");
  // Prefill: every request with one output token; its first token is its TTFT.
  std::vector<serve::TimedRequest> prefill_only = requests;
  for (auto& r : prefill_only) r.output_tokens = 1;
  const auto parts = deal(prefill_only, d.prefill_workers);
  std::vector<std::vector<DecodeJob>> decode_jobs(d.decode_workers);
  for (int p = 0; p < d.prefill_workers; ++p) {
    if (parts[p].empty()) continue;
    const serve::SimResult sim = serve::simulate_continuous(parts[p], d.replica, d.cost);
    double link_free = 0;  // one transfer at a time on this replica's link, in finishing order
    std::vector<std::size_t> order(parts[p].size());
    for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return sim.timings[a].first_token_ms < sim.timings[b].first_token_ms;
    });
    for (const std::size_t k : order) {
      const std::size_t i = k * d.prefill_workers + p;
      serve::RequestTiming& t = outcome.timings[i];
      t = sim.timings[k];
      t.output_tokens = requests[i].output_tokens;
      t.finish_ms = t.first_token_ms;
      if (requests[i].output_tokens == 1) continue;
      const double ms = d.link.transfer_ms(d.kv_bytes_per_token * requests[i].prompt_tokens);
      const double begin = std::max(link_free, t.first_token_ms);
      link_free = begin + ms;
      outcome.transfer_ms_total += ms;
      const int total = requests[i].prompt_tokens + requests[i].output_tokens - 1;
      decode_jobs[i % d.decode_workers].push_back(
          {i, link_free, requests[i].prompt_tokens, requests[i].output_tokens - 1,
           (total + d.replica.block_size - 1) / d.replica.block_size});
    }
  }
  for (int r = 0; r < d.decode_workers; ++r) decode_replica(decode_jobs[r], d, outcome.timings);
  return outcome;
}

std::vector<serve::TimedRequest> fixed_prompt_workload(int count, int prompt_tokens, int output_min,
                                                       int output_max, double rate,
                                                       std::uint64_t seed) {
  BOOK_CHECK(count >= 1 && prompt_tokens >= 1 && output_min >= 1 && output_max >= output_min &&
                 rate > 0 && std::isfinite(rate),
             "fixed_prompt_workload: count " << count << ", prompt " << prompt_tokens
                                             << ", outputs [" << output_min << ", " << output_max
                                             << "], rate " << rate);
  Rng rng(seed);  // the book's own generator: the same workload on every standard library
  std::vector<serve::TimedRequest> out(count);
  double t = 0;
  for (int i = 0; i < count; ++i) {
    t += -std::log(1.0 - rng.uniform()) * 1000.0 / rate;  // Poisson: exponential gaps, in ms
    out[i] = {i, t, prompt_tokens, static_cast<int>(rng.uniform_int(output_min, output_max))};
  }
  return out;
}

}  // namespace book::pd
