/// @file
/// What the scheduler knows: every request's tokens and progress, the waiting and running
/// queues, the per-step limits, and the plan one step produces. Plain data, so the exercises
/// (schedule_step.h, preempt.h, chunked_prefill.h) are functions over it and the tests can build
/// any state by hand.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <vector>

#include "chapters/10_paged_attention/block_manager.h"

namespace book::serve {

/// A request's name inside the engine (also its sequence id in chapter 10's BlockManager).
using RequestId = kv::SequenceId;

/// One request as the scheduler sees it.
struct Sequence {
  RequestId id = 0;  ///< its name
  /// Everything the request has: its prompt, then every token sampled so far. While it runs,
  /// the BlockManager holds tokens[0, length) where length = tokens.size() during prefill and
  /// tokens.size() − 1 during decode (the last sampled token is run by the next step).
  std::vector<int> tokens;
  int prompt_tokens = 0;  ///< length of the original prompt
  int max_tokens = 1;     ///< it finishes after generating this many tokens (or a stop token)
  int preemptions = 0;    ///< times it was preempted (recomputed from scratch afterwards)

  /// Tokens generated so far.
  int generated() const { return static_cast<int>(tokens.size()) - prompt_tokens; }
};

/// The per-step limits (vLLM's max_num_seqs and max_num_batched_tokens).
struct SchedulerConfig {
  int max_running = 32;         ///< requests in the running batch at most
  int token_budget = 256;       ///< new tokens (rows of the model step) per step at most
  bool chunked_prefill = true;  ///< split a prompt over steps (else a prompt runs whole)
};

/// Throws book::Error unless max_running >= 1 and token_budget >= max_running (every running
/// request must be able to decode in the same step, or decodes would starve each other).
void check_config(const SchedulerConfig& config);

/// The scheduler's state: the requests and the two queues of their ids.
struct SchedulerState {
  std::map<RequestId, Sequence> sequences;  ///< every unfinished request
  /// Not in the cache, in the order they will be admitted: arrival order, with preempted
  /// requests put back at the front (they arrived earlier than anything behind them).
  std::deque<RequestId> waiting;
  /// In the cache (BlockManager), oldest admission first; a request still prefilling is here too.
  std::vector<RequestId> running;
};

/// One request's share of a step: model positions [start, start + count) of its tokens.
struct ScheduledChunk {
  RequestId id = 0;      ///< the request
  int start = 0;         ///< first position run (tokens already in the cache)
  int count = 0;         ///< positions run this step
  bool samples = false;  ///< the chunk reaches the request's last token: sample the next one
  bool decode = false;   ///< a decode (one token after the prompt), not a prefill chunk
};

/// What one step will do.
struct StepPlan {
  std::vector<ScheduledChunk> chunks;  ///< decodes first (oldest first), then prefill chunks
  std::vector<RequestId> preempted;    ///< moved back to waiting this step, in that order
  std::vector<RequestId> admitted;     ///< moved from waiting to running this step
  std::vector<kv::BlockCopy> copies;   ///< copy-on-write copies to do before the model runs
  /// Rows of the model step: the sum of the chunks' counts.
  int tokens() const;
};

}  // namespace book::serve
