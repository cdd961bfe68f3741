/// @file
/// The scheduler: requests in, one StepPlan per model step out, on chapter 10's BlockManager.
///
/// It owns the SchedulerState and checks every request on arrival, so that no request can stall
/// the queue forever: one that could never run (longer than the model's context, more blocks than
/// the whole cache, or a prompt longer than the token budget without chunked prefill) is refused
/// with a book::Error instead. schedule() is the exercise serve.schedule_step; record() and
/// finish() apply what the model step produced. The engine (engine.h) drives it with a real
/// model; the simulator (simulate.h) drives it with a cost model and no model at all.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "chapters/10_paged_attention/block_manager.h"
#include "chapters/11_continuous_batching/scheduler_state.h"

namespace book::serve {

/// What preemption did so far: how often, and what it cost (positions to run again under
/// recompute, positions moved under swap; the engine turns positions into bytes).
struct PreemptionStats {
  std::int64_t recomputed = 0;         ///< victims whose K/V was dropped (recompute)
  std::int64_t swap_fallbacks = 0;     ///< of those, kSwap victims the host arena had no room for
  std::int64_t swapped_out = 0;        ///< victims whose K/V went to the host arena
  std::int64_t swapped_in = 0;         ///< swapped requests resumed (copied back)
  std::int64_t dropped_positions = 0;  ///< computed positions dropped: recomputed on readmission
  std::int64_t positions_out = 0;      ///< positions copied device → host
  std::int64_t positions_in = 0;       ///< positions copied host → device
};

/// See the file comment.
class Scheduler {
 public:
  /// Schedules into `blocks` (not owned; empty) within `config`, for a model of `max_positions`
  /// positions. Throws book::Error if the config is invalid or blocks holds sequences.
  Scheduler(kv::BlockManager& blocks, const SchedulerConfig& config, int max_positions);

  /// Queues a request (at the back of waiting) and returns its id (0, 1, 2, ... in order).
  /// Throws book::Error, naming the numbers, if the prompt is empty, max_tokens < 1, or the
  /// request could never run: prompt + max_tokens − 1 positions more than the model's context or
  /// than the whole cache holds, or (without chunked prefill) than the token budget.
  RequestId add(std::vector<int> prompt, int max_tokens);
  /// Disaggregated serving (chapter 13): admits straight into running a request whose prompt was
  /// prefilled elsewhere and whose first token was sampled there. Runs add()'s checks, allocates
  /// the prompt's blocks and marks them computed: the caller writes the received keys and values
  /// into blocks().block_table(id) (positions from the returned Admission's cached_tokens on)
  /// before the next step, which decodes `first_token`. Returns nothing and changes nothing when
  /// it cannot be admitted now (out of blocks, max_running reached, or an earlier request
  /// waiting): the caller keeps it and tries again after a step. Throws book::Error as add() does,
  /// and if max_tokens < 2 (nothing left to decode).
  std::optional<std::pair<RequestId, kv::Admission>> add_prefilled(std::vector<int> prompt,
                                                                   int first_token, int max_tokens);

  /// Plans the next step (serve.schedule_step). Throws book::Error if there is work but the plan
  /// is empty (a scheduler bug: better an error than a hang).
  StepPlan schedule();
  /// Applies a step's results: every chunk's positions are now in the cache, and each sampling
  /// chunk's request gets its token (`sampled` holds them in the plan's order of sampling
  /// chunks). Once per schedule(): throws book::Error, changing nothing, if no plan awaits its
  /// results (a second record of one plan) or if the count differs.
  void record(const StepPlan& plan, std::span<const int> sampled);
  /// Speculative decoding (chapter 13): after record(), appends `tokens` to running request `id`:
  /// the tokens a verification pass decided beyond the one record() gave it. The block manager
  /// is the caller's to keep in step (chapter 13 rolls rejected positions back with
  /// BlockManager::truncate and marks the accepted ones computed). Throws book::Error if `id` is
  /// not running or the request would pass its max_tokens.
  void append_tokens(RequestId id, std::span<const int> tokens);
  /// Removes a finished request (frees its blocks). Throws book::Error if it is not running.
  void finish(RequestId id);
  /// Removes an unfinished request wherever it is (waiting, running or swapped out) and frees its
  /// device and host blocks. Returns false (and changes nothing) if the scheduler does not know
  /// it (never added, finished, or cancelled before). Call it between steps, never between
  /// schedule() and record().
  bool cancel(RequestId id);

  /// Changes max_running and the token budget from the next step on (the SLO-driven threshold).
  /// Throws book::Error if the config would become invalid (check_config), or if without chunked
  /// prefill the budget would shrink (a queued request might no longer fit).
  void set_limits(int max_running, int token_budget);

  /// Whether a request is waiting, running or swapped out.
  bool has_work() const {
    return !state_.waiting.empty() || !state_.running.empty() || !swapped_.empty();
  }
  const SchedulerState& state() const { return state_; }     ///< queues and sequences
  const Sequence& sequence(RequestId id) const;              ///< throws book::Error if unknown
  const SchedulerConfig& config() const { return config_; }  ///< the limits
  kv::BlockManager& blocks() { return blocks_; }             ///< the KV bookkeeping
  std::int64_t preemptions() const { return preemptions_; }  ///< since construction
  const PreemptionStats& preemption_stats() const { return stats_; }  ///< since construction
  /// Requests swapped out to the host arena (in neither queue), oldest first.
  std::vector<RequestId> swapped() const;
  int host_blocks_used() const;  ///< host arena blocks holding swapped requests' K/V

 private:
  kv::BlockManager& blocks_;
  SchedulerConfig config_;
  int max_positions_;
  SchedulerState state_;
  RequestId next_id_ = 0;
  std::int64_t preemptions_ = 0;
  PreemptionStats stats_;
  std::map<RequestId, SwapCopy> swapped_;  // by id: arrival order, the order they resume in
  std::vector<int> free_host_blocks_;      // the host arena's free list
  bool awaiting_record_ = false;           // schedule() planned a step record() has not applied

  void check_request(const char* who, std::size_t prompt, int max_tokens) const;
  void swap_in_ready(StepPlan& plan);  // resumes swapped requests that fit, before planning
  void after_preemption(
      StepPlan& plan, const std::map<RequestId, std::pair<std::vector<kv::BlockId>, int>>& before);
};

}  // namespace book::serve
