/// @file
/// What every worker of disaggregated.h shares: one chapter-11 engine with its own chapter-10
/// cache, runner and block manager, the wall clock they all read, and the up-front checks.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "chapters/03_collectives/communicator.h"
#include "chapters/10_paged_attention/block_manager.h"
#include "chapters/10_paged_attention/kv_cache.h"
#include "chapters/10_paged_attention/model_runner.h"
#include "chapters/11_continuous_batching/engine.h"
#include "chapters/13_disaggregation_speculation/pd/disaggregated.h"

namespace book::pd {

/// The wall clock every worker of one run reads (arrivals, first tokens, finishes).
using Clock = std::chrono::steady_clock;

/// Milliseconds since `start`.
double ms_since(Clock::time_point start);

/// One engine and what it owns. Not copyable (the engine holds references to the others).
struct Worker {
  kv::PagedKvCache cache;   ///< this worker's own KV blocks
  kv::ModelRunner runner;   ///< the model's forward pass over `cache`
  kv::BlockManager blocks;  ///< which blocks hold which sequence
  serve::Engine engine;     ///< chapter 11's engine over the three above
  /// Builds the four for `model` with `config`'s cache size, block size and scheduler settings.
  Worker(train::Model<float>& model, const WorkerConfig& config);
};

/// Submits the requests `order[next..]` that have arrived by now (prefill: with max_tokens = 1,
/// the first token being all a prefill worker samples); records engine id -> request index.
/// Returns the new `next`.
std::size_t submit_arrived(serve::Engine& engine, const std::vector<TimedGeneration>& requests,
                           const std::vector<int>& order, std::size_t next, Clock::time_point start,
                           std::map<serve::RequestId, int>& index, bool prefill);

/// Sleeps until `request` arrives (at most 50 ms, so a caller loops and rechecks).
void sleep_until_arrival(const TimedGeneration& request, Clock::time_point start);

/// Throws book::Error, naming the pool (`pool`) and the request, if any request could never run
/// on a worker of `config` (chapter 11's scheduler checks, vocabulary) — before anything starts,
/// so that no worker fails halfway with requests in flight.
void check_requests(const train::Model<float>& model, const std::vector<TimedGeneration>& requests,
                    const WorkerConfig& config, const std::string& pool);

/// A result with one empty slot per request.
PdResult empty_result(const std::vector<TimedGeneration>& requests);

/// What one decode worker counted (each its own; merge_over_ranks adds them up).
struct DecodeStats {
  std::int64_t max_inbox = 0;      ///< most transfers held waiting at once
  std::int64_t admit_retries = 0;  ///< admissions refused for lack of blocks, retried
  std::int64_t preemptions = 0;    ///< its scheduler's preemptions
  std::int64_t prefix_hits = 0;    ///< prompt blocks its prefix cache already had
};

/// After a run, every rank of `world` holds only its own part of `result` (a prefill worker the
/// first tokens and bytes sent, a decode worker the rest) and its `stats` (zero on prefill
/// ranks). Two all-reduces (max, then sum) make every rank's `result` the whole run's.
void merge_over_ranks(coll::Communicator& world, const std::vector<TimedGeneration>& requests,
                      const DecodeStats& stats, PdResult& result);

/// Fills arrival, prompt and output counts of every timing from the requests and tokens.
void finish_timings(const std::vector<TimedGeneration>& requests, PdResult& result);

}  // namespace book::pd
