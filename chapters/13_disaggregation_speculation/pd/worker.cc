// One engine per worker, the shared clock, the up-front checks, and the colocated peer.
#include "chapters/13_disaggregation_speculation/pd/worker.h"

#include <algorithm>
#include <thread>

#include "common/check.h"

namespace book::pd {

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

Worker::Worker(train::Model<float>& model, const WorkerConfig& config)
    : cache(kv::kv_shape_of(model.config()), config.kv_blocks, config.block_size),
      runner(model, cache, config.scheduler.token_budget, kv::AttentionKernel::kFast,
             config.threads),
      blocks(config.kv_blocks, config.block_size, config.prefix_caching),
      engine(runner, blocks, config.scheduler) {}

std::size_t submit_arrived(serve::Engine& engine, const std::vector<TimedGeneration>& requests,
                           const std::vector<int>& order, std::size_t next, Clock::time_point start,
                           std::map<serve::RequestId, int>& index, bool prefill) {
  const double now = ms_since(start);
  for (; next < order.size() && requests[order[next]].arrival_ms <= now; ++next) {
    serve::GenerationRequest r = requests[order[next]].request;
    if (prefill) r.max_tokens = 1;
    index[engine.submit(r)] = order[next];
  }
  return next;
}

void sleep_until_arrival(const TimedGeneration& request, Clock::time_point start) {
  const double wait = std::min(50.0, request.arrival_ms - ms_since(start));
  if (wait > 0) std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(wait));
}

void check_requests(const train::Model<float>& model, const std::vector<TimedGeneration>& requests,
                    const WorkerConfig& config, const std::string& pool) {
  // A throwaway scheduler of the worker's shape runs chapter 11's own admission checks.
  kv::BlockManager blocks(config.kv_blocks, config.block_size, false);
  serve::Scheduler scheduler(blocks, config.scheduler, model.config().context);
  const bool prefill = pool == "prefill";
  for (std::size_t i = 0; i < requests.size(); ++i) {
    const serve::GenerationRequest& r = requests[i].request;
    try {
      for (const int t : r.prompt)
        BOOK_CHECK(t >= 0 && t < model.config().vocab_size,
                   "prompt token " << t << " is outside the vocabulary [0, "
                                   << model.config().vocab_size << ")");
      BOOK_CHECK(requests[i].arrival_ms >= 0, "arrival_ms = " << requests[i].arrival_ms);
      scheduler.add(r.prompt, prefill ? 1 : r.max_tokens);
    } catch (const Error& e) {
      throw Error("the " + pool + " pool cannot serve request " + std::to_string(i) + ": " +
                  e.what());
    }
  }
}

PdResult empty_result(const std::vector<TimedGeneration>& requests) {
  PdResult result;
  result.tokens.resize(requests.size());
  result.timings.resize(requests.size());
  result.kv_bytes.assign(requests.size(), 0);
  result.bytes_sent.assign(requests.size(), 0);
  return result;
}

void finish_timings(const std::vector<TimedGeneration>& requests, PdResult& result) {
  for (std::size_t i = 0; i < requests.size(); ++i) {
    serve::RequestTiming& t = result.timings[i];
    t.arrival_ms = requests[i].arrival_ms;
    t.prompt_tokens = static_cast<int>(requests[i].request.prompt.size());
    t.output_tokens = std::max<int>(1, static_cast<int>(result.tokens[i].size()));
  }
}

PdResult serve_colocated(train::Model<float>& model, const std::vector<TimedGeneration>& requests,
                         const WorkerConfig& worker_config) {
  check_requests(model, requests, worker_config, "colocated");
  Worker worker(model, worker_config);
  PdResult result = empty_result(requests);
  std::vector<int> order(requests.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return requests[a].arrival_ms < requests[b].arrival_ms; });
  std::map<serve::RequestId, int> index;
  const Clock::time_point start = Clock::now();
  worker.engine.on_token([&](serve::RequestId id, int, bool last) {
    serve::RequestTiming& t = result.timings[index.at(id)];
    const double now = ms_since(start);
    if (t.first_token_ms == 0) t.first_token_ms = now;
    if (last) t.finish_ms = now;
  });
  std::size_t next = 0;
  while (next < order.size() || worker.engine.has_work()) {
    next = submit_arrived(worker.engine, requests, order, next, start, index, false);
    if (worker.engine.has_work()) {
      worker.engine.step();
      for (serve::Completion& c : worker.engine.take_finished())
        result.tokens[index.at(c.id)] = std::move(c.tokens);
    } else if (next < order.size()) {
      sleep_until_arrival(requests[order[next]], start);
    }
  }
  finish_timings(requests, result);
  return result;
}

}  // namespace book::pd
