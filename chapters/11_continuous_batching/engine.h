/// @file
/// The engine: requests in, tokens out. Its four parts are the scheduler (scheduler.h: which
/// requests run this step, and how many of their tokens), the block manager (chapter 10: where
/// their keys and values live), the model runner (chapter 10: one batched forward over every
/// scheduled token) and the sampler (sampling.h: the next token of each request that reached
/// its end). step() is one iteration of continuous batching: schedule, run, sample, retire.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "chapters/10_paged_attention/block_manager.h"
#include "chapters/10_paged_attention/model_runner.h"
#include "chapters/11_continuous_batching/host_arena.h"
#include "chapters/11_continuous_batching/sampling.h"
#include "chapters/11_continuous_batching/scheduler.h"

namespace book::serve {

/// One request to the engine.
struct GenerationRequest {
  std::vector<int> prompt;       ///< token ids, not empty
  int max_tokens = 16;           ///< it stops after this many new tokens
  SamplingParams sampling;       ///< greedy by default
  std::vector<int> stop_tokens;  ///< it stops after sampling one of these (which is returned)
};

/// Why a request finished.
enum class FinishReason {
  kLength,  ///< max_tokens reached
  kStop,    ///< a stop token sampled
};

/// A finished request.
struct Completion {
  RequestId id = 0;                             ///< the request
  std::vector<int> tokens;                      ///< the generated tokens, in order
  FinishReason reason = FinishReason::kLength;  ///< why it stopped
  int preemptions = 0;                          ///< times it was evicted (recomputed or swapped)
  int first_token_step = 0;                     ///< the step (1-based) that sampled its first token
  int finish_step = 0;                          ///< the step that sampled its last token
};

/// What one step did: the batch composition the step-trace picture draws.
struct StepRecord {
  int step = 0;            ///< 1-based
  int decode_rows = 0;     ///< requests that decoded one token
  int prefill_rows = 0;    ///< prompt positions run (chunks of admitted or prefilling requests)
  int prefill_chunks = 0;  ///< prefill chunks (requests that prefilled)
  int running = 0;         ///< running after the step
  int waiting = 0;         ///< waiting after the step
  int preempted = 0;       ///< requests preempted by this step
  int swapped_out = 0;     ///< of those, swapped to the host arena
  int swapped_in = 0;      ///< swapped requests resumed by this step
  int finished = 0;        ///< requests that finished in this step
  int used_blocks = 0;     ///< KV blocks in use after scheduling (before finishing)
};

/// See the file comment.
class Engine {
 public:
  /// Called for every sampled token: the request, the token, whether it was the last.
  using TokenCallback = std::function<void(RequestId, int token, bool finished)>;

  /// Serves with `runner` (not owned) and `blocks` (not owned; must describe the runner's cache,
  /// and be empty); with PreemptionMode::kSwap it allocates a host arena of config.host_blocks
  /// blocks. Throws book::Error if the block pools differ, the runner's max_rows is below the
  /// token budget, or preemption is by swap and the runner's cache is not FP32 (the host arena
  /// copies FP32 rows; an INT8 cache is served with kRecompute).
  Engine(kv::ModelRunner& runner, kv::BlockManager& blocks, const SchedulerConfig& config);

  /// Queues a request; returns its id. Throws book::Error on bad input (the scheduler's checks;
  /// sampling parameters; a prompt or stop token outside the vocabulary).
  RequestId submit(const GenerationRequest& request);
  /// Disaggregated serving (chapter 13): admits a request prefilled on another engine, whose
  /// first token `first_token` was sampled there (the callback is not called for it). Runs
  /// submit()'s checks and Scheduler::add_prefilled; on success the caller writes the received
  /// keys and values into scheduler().blocks().block_table(id) before the next step. Returns
  /// nothing (and changes nothing) when it cannot be admitted now: try again after a step.
  std::optional<std::pair<RequestId, kv::Admission>> admit_prefilled(
      const GenerationRequest& request, int first_token);
  /// Streams tokens to `callback` as they are sampled.
  void on_token(TokenCallback callback) { callback_ = std::move(callback); }
  /// One iteration: schedule, copy-on-write, run the model once, sample, retire finished ones.
  StepRecord step();
  /// Whether a request is unfinished.
  bool has_work() const { return scheduler_.has_work(); }
  /// Steps until every request finished; returns every completion not yet taken, by id.
  std::vector<Completion> run();
  /// The completions finished so far and not yet taken, by id.
  std::vector<Completion> take_finished();
  /// Drops an unfinished request (waiting, running or swapped out): its device and host blocks
  /// return to their pools, it samples nothing more and never appears in take_finished(); the
  /// others' tokens are unchanged. Returns false (and changes nothing) for an id that is not
  /// unfinished here. Call it between steps.
  bool cancel(RequestId id);

  const Scheduler& scheduler() const { return scheduler_; }   ///< queues and counters
  int steps() const { return steps_; }                        ///< steps so far
  std::int64_t swap_bytes_out() const { return bytes_out_; }  ///< K/V bytes copied to the host
  std::int64_t swap_bytes_in() const { return bytes_in_; }    ///< K/V bytes copied back
  /// The host arena (kSwap), else null.
  const HostKvArena* host_arena() const { return host_ ? &*host_ : nullptr; }

 private:
  kv::ModelRunner& runner_;
  Scheduler scheduler_;
  std::map<RequestId, GenerationRequest> requests_;
  std::map<RequestId, Completion> finished_;
  std::map<RequestId, int> first_token_step_;
  void check_request(const GenerationRequest& request) const;
  TokenCallback callback_;
  int steps_ = 0;
  std::optional<HostKvArena> host_;
  std::int64_t bytes_out_ = 0, bytes_in_ = 0;
};

}  // namespace book::serve
