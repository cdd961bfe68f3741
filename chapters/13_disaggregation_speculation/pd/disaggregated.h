/// @file
/// Prefill/decode disaggregation on real engines: a pool of prefill workers and a pool of decode
/// workers, each worker a chapter-11 Engine with its own chapter-10 cache, block manager and model
/// runner, the workers being ranks of chapter 3's Communicator: threads (the default) or MPI
/// processes (mpirun).
///
/// A request goes to prefill worker i % P, which runs its prompt (chunked prefill and batching as
/// chapter 11 does) and samples the first token. At that moment, before the engine frees its
/// blocks, the worker packs the prompt's keys and values (pack_kv) and sends them, with the
/// request, through the Communicator to decode worker i % D. The decode worker keeps what arrives
/// in an inbox (host memory) until its block manager can admit it (Engine::admit_prefilled):
/// out of blocks, the request waits there, it is never dropped. Admitted, its KV is written into
/// the decode worker's own blocks (unpack_kv, through the block table made there) and it decodes
/// to completion beside the others, preempted like any chapter-11 request if blocks run out.
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

#include "chapters/03_collectives/communicator.h"
#include "chapters/04_training_baseline/model.h"
#include "chapters/11_continuous_batching/engine.h"
#include "chapters/11_continuous_batching/metrics.h"

namespace book::pd {

/// One worker's engine: its cache and its scheduler's limits.
struct WorkerConfig {
  int kv_blocks = 64;                ///< blocks of its cache
  int block_size = 16;               ///< tokens per block
  serve::SchedulerConfig scheduler;  ///< max running, token budget, chunked prefill
  int threads = 1;                   ///< the runner's attention threads
  bool prefix_caching = false;       ///< its block manager's prefix cache
};

/// The two pools and how they talk.
struct PdConfig {
  int prefill_workers = 1;  ///< P ranks, 0 .. P − 1
  int decode_workers = 1;   ///< D ranks, P .. P + D − 1
  WorkerConfig prefill;     ///< every prefill worker's engine
  WorkerConfig decode;      ///< every decode worker's engine
  /// The Communicator's timeout: a peer silent this long fails the run with an error naming it.
  std::chrono::milliseconds timeout{30000};
  /// For the failure test: after sending this many requests' headers, a prefill worker goes
  /// silent (sends nothing more for 3 timeouts, then gives up). −1: never.
  int die_after_headers = -1;
  /// For the tests: a decode worker admits nothing until this many transfers wait in its inbox
  /// (or every prefill worker is done), so that a small cache is contended the same way on every
  /// run whatever the threads' timing. 0: admit as they come.
  int decode_waits_for = 0;
};

/// A request and when it arrives (milliseconds after the run starts; 0 = at once).
struct TimedGeneration {
  serve::GenerationRequest request;  ///< max_tokens >= 1; greedy or seeded sampling
  double arrival_ms = 0;             ///< it is submitted to its prefill worker then
};

/// What a run did, per request in input order.
struct PdResult {
  std::vector<std::vector<int>> tokens;       ///< each request's generated tokens
  std::vector<serve::RequestTiming> timings;  ///< wall-clock milestones (ms from the start)
  std::vector<std::int64_t> kv_bytes;         ///< KV payload bytes sent for it (0: not sent)
  std::vector<std::int64_t> bytes_sent;       ///< every byte sent for it: header, tokens, KV
  std::int64_t max_inbox = 0;                 ///< most transfers one decode worker held waiting
  std::int64_t admit_retries = 0;             ///< admissions refused for lack of blocks, retried
  std::int64_t decode_preemptions = 0;        ///< preemptions on the decode workers
  std::int64_t decode_prefix_hits = 0;  ///< prompt blocks the decode workers' prefix caches had
};

/// Serves `requests` on config.prefill_workers + config.decode_workers threads; see the file
/// comment. `model` (not owned; read-only, shared by every worker) is whole. Throws book::Error
/// if a pool has size 0 (naming it), a request can never run on a worker (chapter 11's checks,
/// made up front), or a worker fails: a peer that goes silent mid-transfer ends the run with the
/// Communicator's timeout error, naming the call and the rank it waited for.
PdResult serve_disaggregated(train::Model<float>& model,
                             const std::vector<TimedGeneration>& requests, const PdConfig& config);

/// The same system, one rank's part of it: `world` is this rank's end of a group of exactly
/// P + D ranks (chapter 3's MPI backend under `mpirun -np P+D`, or a thread rank: the function
/// above runs this one on run_ranks). Rank r < P is prefill worker r, rank P + d decode worker d.
/// Every rank passes the same model, requests and config, and every rank returns the whole
/// result (merged over `world` after the run). Sets `world`'s timeout to config.timeout. Throws
/// book::Error on every rank alike if world.size() differs from P + D (naming both), or for the
/// reasons above.
PdResult serve_disaggregated(coll::Communicator& world, train::Model<float>& model,
                             const std::vector<TimedGeneration>& requests, const PdConfig& config);

/// The peer: one chapter-11 engine with `worker` serving every request (same arrivals, same
/// clock), for token-for-token comparison and the wall-clock table.
PdResult serve_colocated(train::Model<float>& model, const std::vector<TimedGeneration>& requests,
                         const WorkerConfig& worker);

/// Throws book::Error naming the pool if either has size 0 (or below), or is past 64 workers.
void check_pools(const PdConfig& config);

}  // namespace book::pd
