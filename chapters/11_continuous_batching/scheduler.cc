#include "chapters/11_continuous_batching/scheduler.h"

#include <algorithm>

#include "chapters/11_continuous_batching/schedule_step.h"
#include "common/check.h"

namespace book::serve {

Scheduler::Scheduler(kv::BlockManager& blocks, const SchedulerConfig& config, int max_positions)
    : blocks_(blocks), config_(config), max_positions_(max_positions) {
  check_config(config);
  BOOK_CHECK(max_positions >= 1, "Scheduler: max_positions must be >= 1, got " << max_positions);
  BOOK_CHECK(blocks.sequences().empty(), "Scheduler: the block manager already holds "
                                             << blocks.sequences().size()
                                             << " sequences; give it an empty one");
}

RequestId Scheduler::add(std::vector<int> prompt, int max_tokens) {
  BOOK_CHECK(!prompt.empty(), "Scheduler::add: the prompt is empty");
  BOOK_CHECK(max_tokens >= 1, "Scheduler::add: max_tokens must be >= 1, got " << max_tokens);
  // The most positions it ever holds: its last token is sampled, never run.
  const std::int64_t longest = static_cast<std::int64_t>(prompt.size()) + max_tokens - 1;
  BOOK_CHECK(longest <= max_positions_, "Scheduler::add: prompt of "
                                            << prompt.size() << " tokens plus max_tokens "
                                            << max_tokens << " needs " << longest
                                            << " positions, more than the model's context of "
                                            << max_positions_ << "; shorten one of them");
  const std::int64_t blocks_needed = (longest + blocks_.block_size() - 1) / blocks_.block_size();
  BOOK_CHECK(blocks_needed <= blocks_.num_blocks(),
             "Scheduler::add: prompt of " << prompt.size() << " tokens plus max_tokens "
                                          << max_tokens << " needs " << blocks_needed
                                          << " KV blocks, more than the whole cache of "
                                          << blocks_.num_blocks()
                                          << " blocks: it could never run; give the cache more "
                                             "blocks or the request fewer tokens");
  BOOK_CHECK(config_.chunked_prefill || longest <= config_.token_budget,
             "Scheduler::add: without chunked prefill a request of up to "
                 << longest << " positions (recomputed whole after a preemption) must fit the "
                 << "token budget of " << config_.token_budget
                 << "; turn chunked prefill on or raise the budget");
  const RequestId id = next_id_++;
  Sequence sequence;
  sequence.id = id;
  sequence.prompt_tokens = static_cast<int>(prompt.size());
  sequence.tokens = std::move(prompt);
  sequence.max_tokens = max_tokens;
  state_.sequences.emplace(id, std::move(sequence));
  state_.waiting.push_back(id);
  return id;
}

StepPlan Scheduler::schedule() {
  StepPlan plan = schedule_step(state_, blocks_, config_);
  preemptions_ += static_cast<std::int64_t>(plan.preempted.size());
  BOOK_CHECK(!has_work() || !plan.chunks.empty(),
             "Scheduler::schedule: " << state_.waiting.size() << " waiting and "
                                     << state_.running.size()
                                     << " running, but the step plans nothing (a scheduler bug)");
  return plan;
}

void Scheduler::record(const StepPlan& plan, std::span<const int> sampled) {
  std::size_t next = 0;
  for (const ScheduledChunk& chunk : plan.chunks) {
    blocks_.mark_computed(chunk.id, chunk.start + chunk.count);
    if (!chunk.samples) continue;
    BOOK_CHECK(next < sampled.size(), "Scheduler::record: " << sampled.size()
                                                            << " sampled tokens for a plan with "
                                                               "more sampling chunks");
    state_.sequences.at(chunk.id).tokens.push_back(sampled[next++]);
  }
  BOOK_CHECK(next == sampled.size(), "Scheduler::record: " << sampled.size()
                                                           << " sampled tokens for " << next
                                                           << " sampling chunks");
}

void Scheduler::finish(RequestId id) {
  const auto it = std::find(state_.running.begin(), state_.running.end(), id);
  BOOK_CHECK(it != state_.running.end(), "Scheduler::finish: request " << id << " is not running");
  state_.running.erase(it);
  blocks_.free(id);
  state_.sequences.erase(id);
}

void Scheduler::set_limits(int max_running, int token_budget) {
  SchedulerConfig config = config_;
  config.max_running = max_running;
  config.token_budget = token_budget;
  check_config(config);
  BOOK_CHECK(config.chunked_prefill || token_budget >= config_.token_budget,
             "Scheduler::set_limits: without chunked prefill the budget cannot shrink below "
             "the one requests were admitted against ("
                 << config_.token_budget << "), got " << token_budget);
  config_ = config;
}

const Sequence& Scheduler::sequence(RequestId id) const {
  const auto it = state_.sequences.find(id);
  BOOK_CHECK(it != state_.sequences.end(), "Scheduler: unknown request " << id);
  return it->second;
}

}  // namespace book::serve
