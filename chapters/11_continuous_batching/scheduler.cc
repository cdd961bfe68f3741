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
  for (int b = config.host_blocks - 1; b >= 0; --b) free_host_blocks_.push_back(b);
}

void Scheduler::check_request(const char* who, std::size_t prompt_tokens, int max_tokens) const {
  BOOK_CHECK(prompt_tokens > 0, who << ": the prompt is empty");
  BOOK_CHECK(max_tokens >= 1, who << ": max_tokens must be >= 1, got " << max_tokens);
  // The most positions it ever holds: its last token is sampled, never run.
  const std::int64_t longest = static_cast<std::int64_t>(prompt_tokens) + max_tokens - 1;
  BOOK_CHECK(longest <= max_positions_,
             who << ": prompt of " << prompt_tokens << " tokens plus max_tokens " << max_tokens
                 << " needs " << longest << " positions, more than the model's context of "
                 << max_positions_ << "; shorten one of them");
  const std::int64_t blocks_needed = (longest + blocks_.block_size() - 1) / blocks_.block_size();
  BOOK_CHECK(blocks_needed <= blocks_.num_blocks(),
             who << ": prompt of " << prompt_tokens << " tokens plus max_tokens " << max_tokens
                 << " needs " << blocks_needed << " KV blocks, more than the whole cache of "
                 << blocks_.num_blocks()
                 << " blocks: it could never run; give the cache more blocks or the request "
                    "fewer tokens");
  BOOK_CHECK(config_.chunked_prefill || longest <= config_.token_budget,
             who << ": without chunked prefill a request of up to " << longest
                 << " positions (recomputed whole after a preemption) must fit the "
                 << "token budget of " << config_.token_budget
                 << "; turn chunked prefill on or raise the budget");
}

RequestId Scheduler::add(std::vector<int> prompt, int max_tokens) {
  check_request("Scheduler::add", prompt.size(), max_tokens);
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

std::optional<std::pair<RequestId, kv::Admission>> Scheduler::add_prefilled(std::vector<int> prompt,
                                                                            int first_token,
                                                                            int max_tokens) {
  check_request("Scheduler::add_prefilled", prompt.size(), max_tokens);
  BOOK_CHECK(max_tokens >= 2,
             "Scheduler::add_prefilled: max_tokens must be >= 2 (the first "
             "token came with the prefill; nothing is left to decode), got "
                 << max_tokens);
  // First come, first served: a preempted or swapped request waiting here arrived earlier.
  if (!state_.waiting.empty() || !swapped_.empty() ||
      static_cast<int>(state_.running.size()) >= config_.max_running)
    return std::nullopt;
  const RequestId id = next_id_;
  const kv::Admission admission = blocks_.add_sequence(id, prompt);
  if (!admission.ok) return std::nullopt;
  ++next_id_;
  // Its keys and values arrive with it: the next step decodes the first token at once.
  blocks_.mark_computed(id, static_cast<int>(prompt.size()));
  Sequence sequence;
  sequence.id = id;
  sequence.prompt_tokens = static_cast<int>(prompt.size());
  sequence.tokens = std::move(prompt);
  sequence.tokens.push_back(first_token);
  sequence.max_tokens = max_tokens;
  state_.sequences.emplace(id, std::move(sequence));
  state_.running.push_back(id);
  return std::pair{id, admission};
}

//! [swap_schedule]
StepPlan Scheduler::schedule() {
  StepPlan plan;
  swap_in_ready(plan);
  // Where every running request's K/V is before planning: a victim's blocks are read (swap) or
  // counted (recompute) as they were, though the plan may hand them to others at once.
  std::map<RequestId, std::pair<std::vector<kv::BlockId>, int>> before;
  const bool swap = config_.preemption == PreemptionMode::kSwap;
  for (const RequestId id : state_.running) {
    const auto& table = blocks_.block_table(id);  // only swap reads the blocks
    before[id] = {
        swap ? std::vector<kv::BlockId>(table.begin(), table.end()) : std::vector<kv::BlockId>{},
        blocks_.computed(id)};
  }
  // While a request is swapped out nothing new is admitted: it arrived earlier.
  std::deque<RequestId> held;
  if (!swapped_.empty()) held.swap(state_.waiting);
  StepPlan planned = schedule_step(state_, blocks_, config_);
  for (const RequestId id : held) state_.waiting.push_back(id);  // behind this step's victims
  planned.swapped_in = std::move(plan.swapped_in);
  plan = std::move(planned);
  preemptions_ += static_cast<std::int64_t>(plan.preempted.size());
  after_preemption(plan, before);
  BOOK_CHECK(!has_work() || !plan.chunks.empty(),
             "Scheduler::schedule: " << state_.waiting.size() << " waiting and "
                                     << state_.running.size()
                                     << " running, but the step plans nothing (a scheduler bug)");
  awaiting_record_ = true;
  return plan;
}
//! [swap_schedule]

void Scheduler::record(const StepPlan& plan, std::span<const int> sampled) {
  // Checked before anything changes: a second record of one plan used to add a token to every
  // sampling request without a model step.
  BOOK_CHECK(awaiting_record_, "Scheduler::record: no plan awaits its results (record was "
                               "called twice for one plan, or before schedule())");
  const auto sampling = static_cast<std::size_t>(std::count_if(
      plan.chunks.begin(), plan.chunks.end(), [](const ScheduledChunk& c) { return c.samples; }));
  BOOK_CHECK(sampling == sampled.size(), "Scheduler::record: " << sampled.size()
                                                               << " sampled tokens for "
                                                               << sampling << " sampling chunks");
  awaiting_record_ = false;
  std::size_t next = 0;
  for (const ScheduledChunk& chunk : plan.chunks) {
    blocks_.mark_computed(chunk.id, chunk.start + chunk.count);
    if (chunk.samples) state_.sequences.at(chunk.id).tokens.push_back(sampled[next++]);
  }
}

void Scheduler::append_tokens(RequestId id, std::span<const int> tokens) {
  BOOK_CHECK(std::find(state_.running.begin(), state_.running.end(), id) != state_.running.end(),
             "Scheduler::append_tokens: request " << id << " is not running");
  Sequence& sequence = state_.sequences.at(id);
  BOOK_CHECK(sequence.generated() + static_cast<int>(tokens.size()) <= sequence.max_tokens,
             "Scheduler::append_tokens: request "
                 << id << " has " << sequence.generated() << " of max_tokens "
                 << sequence.max_tokens << " tokens; " << tokens.size() << " more pass it");
  sequence.tokens.insert(sequence.tokens.end(), tokens.begin(), tokens.end());
}

void Scheduler::finish(RequestId id) {
  const auto it = std::find(state_.running.begin(), state_.running.end(), id);
  BOOK_CHECK(it != state_.running.end(), "Scheduler::finish: request " << id << " is not running");
  state_.running.erase(it);
  blocks_.free(id);
  state_.sequences.erase(id);
}

bool Scheduler::cancel(RequestId id) {
  if (!state_.sequences.contains(id)) return false;
  if (const auto it = std::find(state_.running.begin(), state_.running.end(), id);
      it != state_.running.end())
    state_.running.erase(it);
  if (const auto it = std::find(state_.waiting.begin(), state_.waiting.end(), id);
      it != state_.waiting.end())
    state_.waiting.erase(it);
  if (const auto it = swapped_.find(id); it != swapped_.end()) {
    for (const int b : it->second.host_blocks) free_host_blocks_.push_back(b);
    swapped_.erase(it);
  }
  if (blocks_.contains(id)) blocks_.free(id);
  state_.sequences.erase(id);
  return true;
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

void Scheduler::swap_in_ready(StepPlan& plan) {
  while (!swapped_.empty() && static_cast<int>(state_.running.size()) < config_.max_running) {
    const auto it = swapped_.begin();
    const RequestId id = it->first;
    const std::vector<int>& tokens = state_.sequences.at(id).tokens;
    // Room for it and, after it, one new block per running request: otherwise the next decode
    // would preempt it again at once (swapping out what was just swapped in).
    const int needed = blocks_.blocks_needed(tokens);
    if (blocks_.num_free_blocks() - needed < static_cast<int>(state_.running.size())) break;
    BOOK_CHECK(blocks_.add_sequence(id, tokens).ok, "Scheduler: request "
                                                        << id << " does not fit although " << needed
                                                        << " blocks are free (a scheduler bug)");
    SwapCopy copy = std::move(it->second);
    swapped_.erase(it);
    for (const int b : copy.host_blocks) free_host_blocks_.push_back(b);
    copy.first = blocks_.computed(id);  // a prefix-cache hit is already on the device
    if (copy.positions > copy.first) blocks_.mark_computed(id, copy.positions);
    const auto& table = blocks_.block_table(id);
    copy.device_blocks.assign(table.begin(), table.begin() + copy.host_blocks.size());
    copy.first = std::min(copy.first, copy.positions);
    stats_.positions_in += copy.positions - copy.first;
    ++stats_.swapped_in;
    state_.running.push_back(id);  // still "prefilling": its last sampled token runs next
    plan.swapped_in.push_back(std::move(copy));
  }
}

void Scheduler::after_preemption(
    StepPlan& plan, const std::map<RequestId, std::pair<std::vector<kv::BlockId>, int>>& before) {
  for (const RequestId victim : plan.preempted) {
    const auto& [table, computed] = before.at(victim);
    const int needed = (computed + blocks_.block_size() - 1) / blocks_.block_size();
    const bool swap = config_.preemption == PreemptionMode::kSwap && computed > 0;
    if (!swap || needed > static_cast<int>(free_host_blocks_.size())) {
      stats_.swap_fallbacks += swap ? 1 : 0;  // the arena is full: recompute instead
      ++stats_.recomputed;
      stats_.dropped_positions += computed;
      continue;
    }
    SwapCopy copy;
    copy.id = victim;
    copy.positions = computed;
    copy.device_blocks.assign(table.begin(), table.begin() + needed);
    for (int i = 0; i < needed; ++i) {
      copy.host_blocks.push_back(free_host_blocks_.back());
      free_host_blocks_.pop_back();
    }
    state_.waiting.erase(std::find(state_.waiting.begin(), state_.waiting.end(), victim));
    ++stats_.swapped_out;
    stats_.positions_out += computed;
    plan.swapped_out.push_back(copy);
    swapped_.emplace(victim, std::move(copy));
  }
}

std::vector<RequestId> Scheduler::swapped() const {
  std::vector<RequestId> out;
  for (const auto& [id, copy] : swapped_) out.push_back(id);
  return out;
}

int Scheduler::host_blocks_used() const {
  return config_.host_blocks - static_cast<int>(free_host_blocks_.size());
}

const Sequence& Scheduler::sequence(RequestId id) const {
  const auto it = state_.sequences.find(id);
  BOOK_CHECK(it != state_.sequences.end(), "Scheduler: unknown request " << id);
  return it->second;
}

}  // namespace book::serve
