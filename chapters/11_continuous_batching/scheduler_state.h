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
  int preemptions = 0;    ///< times it was preempted (then recomputed, or swapped out and back)

  /// Tokens generated so far.
  int generated() const { return static_cast<int>(tokens.size()) - prompt_tokens; }
};

/// What happens to a preempted request's keys and values (vLLM's preemption modes).
enum class PreemptionMode {
  kRecompute,  ///< dropped; one prefill recomputes them when the request is admitted again
  /// Copied into a bounded host arena and freed on the device; copied back into fresh blocks when
  /// the request resumes. When the arena has no room, the victim is recomputed instead.
  kSwap,
};

/// The per-step limits (vLLM's max_num_seqs and max_num_batched_tokens) and the preemption mode.
struct SchedulerConfig {
  int max_running = 32;         ///< requests in the running batch at most
  int token_budget = 256;       ///< new tokens (rows of the model step) per step at most
  bool chunked_prefill = true;  ///< split a prompt over steps (else a prompt runs whole)
  PreemptionMode preemption = PreemptionMode::kRecompute;  ///< what a victim's K/V becomes
  /// Blocks of the host arena (kSwap only): the same block size as the device cache; a victim
  /// needs one per started block of its computed positions.
  int host_blocks = 0;
};

/// Throws book::Error unless max_running >= 1, token_budget >= max_running (every running
/// request must be able to decode in the same step, or decodes would starve each other),
/// host_blocks >= 0, and kSwap has host_blocks >= 1.
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

/// One request's keys and values moved between the device cache and the host arena: positions
/// [first, positions) of its tokens; position p lives in device block device_blocks[p / B] and
/// host block host_blocks[p / B], slot p % B (B the block size of both).
struct SwapCopy {
  RequestId id = 0;                        ///< the request
  std::vector<kv::BlockId> device_blocks;  ///< its device blocks covering the positions
  std::vector<int> host_blocks;            ///< its host arena blocks covering the positions
  int first = 0;                           ///< first position copied
  int positions = 0;                       ///< positions [0, positions) are the request's saved K/V
};

/// What one step will do.
struct StepPlan {
  std::vector<ScheduledChunk> chunks;  ///< decodes first (oldest first), then prefill chunks
  std::vector<RequestId> preempted;    ///< moved back to waiting this step, in that order
  std::vector<RequestId> admitted;     ///< moved from waiting to running this step
  std::vector<kv::BlockCopy> copies;   ///< copy-on-write copies to do before the model runs
  /// Filled by the Scheduler, not by schedule_step (kSwap only). Done before the copy-on-write
  /// copies, in this order: swapped_in (host → device, resumed before the step was planned), then
  /// swapped_out (device → host: victims of this step, read from their blocks as they were).
  std::vector<SwapCopy> swapped_in;
  std::vector<SwapCopy> swapped_out;  ///< see swapped_in
  /// Rows of the model step: the sum of the chunks' counts.
  int tokens() const;
};

}  // namespace book::serve
