/// @file
/// Speculative decoding inside continuous batching: chapter 11's Scheduler plans every step
/// (admission, chunked prefill, preemption by recompute), and each running decode request gets
/// up to γ draft tokens that its verification row carries, so a batch of many requests
/// speculates together. As in vLLM v1, the proposals are scheduled like prefill tokens: a
/// request verifying γ proposals takes γ + 1 rows of the step's token budget, and the scheduler
/// is handed what is left for everything else (Scheduler::set_limits before each step). The
/// draft model serves from its own paged cache, catching up on the same chunks the target runs;
/// rejected positions are rolled back in both caches (BlockManager::truncate), and the accepted
/// tokens reach the scheduler through Scheduler::append_tokens (chapter 11's one seam for this).
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "chapters/11_continuous_batching/engine.h"
#include "chapters/11_continuous_batching/scheduler.h"
#include "chapters/13_disaggregation_speculation/spec_decoder.h"

namespace book::spec {

/// The engine's limits: chapter 11's scheduler config and the proposals per request and step.
struct SpecEngineConfig {
  serve::SchedulerConfig scheduler;  ///< chunked prefill on, preemption by recompute
  int gamma = 4;                     ///< proposals per decode request and step (fewer near its end)
  bool check_blocks = false;         ///< check both managers' invariants after every step (tests)
};

/// What one step did, counted.
struct SpecStepRecord {
  int step = 0;          ///< 1-based
  int budget = 0;        ///< the step's token budget (config.scheduler.token_budget)
  int verify_rows = 0;   ///< target rows of decode requests: Σ (γ_i + 1)
  int prefill_rows = 0;  ///< target rows of prefill chunks
  int decodes = 0;       ///< decode requests (each verified its proposals)
  int draft_rows = 0;    ///< draft model rows (catch-up and proposals)
  int proposed = 0;      ///< proposals verified
  int accepted = 0;      ///< of those, kept
  int emitted = 0;       ///< tokens the step gave requests (sampled or accepted)
  int preempted = 0;     ///< requests preempted by this step
  int finished = 0;      ///< requests that finished in this step
  int rows() const { return verify_rows + prefill_rows; }  ///< the target step's rows
};

/// See the file comment. Greedy requests only: the output of every request is exactly what the
/// target alone would produce (the greedy rule), whatever the batch, the draft or γ.
class SpecEngine {
 public:
  /// Serves with `target` and `draft` (not owned; each manager empty and describing its runner's
  /// cache). Throws book::Error if the vocabularies differ (check_same_vocabulary), γ does not
  /// fit either context (check_gamma), the draft's context is shorter than the target's, the
  /// budget cannot verify every running request at once (token_budget < max_running · (γ + 1)),
  /// a runner takes fewer rows per step than the budget, chunked prefill is off, or the
  /// preemption mode is not recompute.
  SpecEngine(ServedModel target, ServedModel draft, const SpecEngineConfig& config);

  /// Queues a request; returns its id. Throws book::Error on bad input (the scheduler's checks,
  /// tokens outside the vocabulary, or a sampling temperature other than 0).
  serve::RequestId submit(const serve::GenerationRequest& request);
  /// One iteration: schedule, draft, verify in one target pass, accept, roll back, retire.
  SpecStepRecord step();
  /// Whether a request is unfinished.
  bool has_work() const { return scheduler_.has_work(); }
  /// Steps until every request finished; returns every completion not yet taken, by id.
  std::vector<serve::Completion> run();

  const serve::Scheduler& scheduler() const { return scheduler_; }  ///< queues and counters
  int steps() const { return steps_; }                              ///< steps so far
  std::int64_t proposed() const { return proposed_; }               ///< proposals verified
  std::int64_t accepted() const { return accepted_; }               ///< of those, kept

 private:
  ServedModel target_, draft_;
  SpecEngineConfig config_;
  serve::Scheduler scheduler_;
  std::map<serve::RequestId, serve::GenerationRequest> requests_;
  std::map<serve::RequestId, serve::Completion> finished_;
  std::map<serve::RequestId, int> first_token_step_;
  int steps_ = 0;
  std::int64_t proposed_ = 0, accepted_ = 0;

  int gamma_for(serve::RequestId id) const;  // proposals this request may make now
};

}  // namespace book::spec
