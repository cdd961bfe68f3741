// One step of the speculative engine: the budget held back for proposals, the draft's batches,
// the target's one pass, the greedy rule, the rollback of both caches, and retirement.
#include <algorithm>
#include <optional>

#include "chapters/10_paged_attention/decoding.h"
#include "chapters/13_disaggregation_speculation/spec_batch.h"
#include "chapters/13_disaggregation_speculation/spec_engine.h"
#include "chapters/13_disaggregation_speculation/speculative.h"
#include "common/check.h"

namespace book::spec {
namespace {

void copy_if_needed(ServedModel model, const kv::SlotReservation& reservation) {
  if (reservation.copy) model.runner.cache().copy(*reservation.copy);
}

// Brings the draft's copy of a request to its first `upto` tokens: admits it if the draft does
// not hold it (after an admission or a preemption), appends what is missing, and returns the
// positions still to run as one chunk (a lag longer than a step runs alone first). Returns
// nothing when the draft's cache has no room: the request then skips speculation this step,
// which costs speed, never correctness (the target decides every token).
std::optional<kv::SequenceChunk> draft_catch_up(ServedModel draft, serve::RequestId id,
                                                std::span<const int> tokens, int upto,
                                                bool proposes, int& rows) {
  kv::BlockManager& blocks = draft.blocks;
  if (!blocks.contains(id) && !blocks.add_sequence(id, tokens.first(upto)).ok) return std::nullopt;
  if (blocks.length(id) > upto) blocks.truncate(id, upto);
  // A prefix-cache hit may cover every position; a proposal needs the last one's logits.
  if (proposes && blocks.computed(id) >= upto) blocks.truncate(id, upto - 1);
  while (blocks.length(id) < upto) {
    if (!blocks.can_append(id)) return std::nullopt;
    copy_if_needed(draft, blocks.append_token(id, tokens[blocks.length(id)]));
  }
  const int max_rows = draft.runner.max_rows();
  while (upto - blocks.computed(id) > max_rows) {
    const int start = blocks.computed(id);
    run_chunks(draft.runner, {{tokens.subspan(start, max_rows), start, blocks.block_table(id)}});
    blocks.mark_computed(id, start + max_rows);
    rows += max_rows;
  }
  const int start = blocks.computed(id);
  return kv::SequenceChunk{tokens.subspan(start, upto - start), start, blocks.block_table(id)};
}

// A decode request's share of the step.
struct Verify {
  serve::RequestId id = 0;
  int length = 0;         // n: its tokens before the step (the last one not yet in the cache)
  int gamma = 0;          // proposals it makes this step
  std::vector<int> rows;  // the verification rows: its last token, then the proposals
};

}  // namespace

//! [spec_step]
SpecStepRecord SpecEngine::step() {
  SpecStepRecord record;
  record.step = ++steps_;
  const serve::SchedulerConfig& limits = config_.scheduler;
  record.budget = limits.token_budget;
  // 1. Hold back the proposals' rows: every request that will decode may verify γ_i proposals,
  //    and the scheduler plans decodes and prefill chunks in what is left (vLLM v1 schedules
  //    spec tokens like prefill tokens: all of them count against one budget).
  int reserved = 0;
  for (const serve::RequestId id : scheduler_.state().running)
    if (target_.blocks.computed(id) == target_.blocks.length(id)) reserved += gamma_for(id);
  scheduler_.set_limits(limits.max_running, limits.token_budget - reserved);
  const serve::StepPlan plan = scheduler_.schedule();
  scheduler_.set_limits(limits.max_running, limits.token_budget);
  for (const kv::BlockCopy& copy : plan.copies) target_.runner.cache().copy(copy);
  for (const serve::RequestId id : plan.preempted)
    if (draft_.blocks.contains(id)) draft_.blocks.free(id);  // recomputed in both on readmission
  // 2. The draft catches up on every scheduled chunk (a prefill chunk's positions; a decode's
  //    tokens up to its last) in one batch, whose decode rows give the first proposals.
  std::vector<Verify> verify;
  std::vector<int> verify_of(plan.chunks.size(), -1);
  std::vector<kv::SequenceChunk> chunks;
  std::vector<serve::RequestId> ids;
  std::vector<int> owner;  // chunks[i] proposes for verify[owner[i]], or -1 (catch-up only)
  for (std::size_t c = 0; c < plan.chunks.size(); ++c) {
    const serve::ScheduledChunk& s = plan.chunks[c];
    const std::vector<int>& tokens = scheduler_.sequence(s.id).tokens;
    const int upto = s.decode ? s.start + 1 : s.start + s.count;
    if (s.decode) {
      verify_of[c] = static_cast<int>(verify.size());
      verify.push_back({s.id, upto, gamma_for(s.id), {tokens.back()}});
    }
    const auto chunk = draft_catch_up(draft_, s.id, tokens, upto, s.decode, record.draft_rows);
    if (!chunk) {
      if (s.decode) verify.back().gamma = 0;  // no room in the draft's cache: a plain decode
      continue;
    }
    const bool proposes = s.decode && verify.back().gamma > 0;
    if (chunk->tokens.empty() && !proposes) continue;
    chunks.push_back(*chunk);
    ids.push_back(s.id);
    owner.push_back(proposes ? verify_of[c] : -1);
  }
  // 3. Proposals: each draft step runs every request still proposing as one batch.
  while (!chunks.empty()) {
    for (const auto& c : chunks) record.draft_rows += static_cast<int>(c.tokens.size());
    const auto logits = run_chunks(draft_.runner, chunks);
    std::vector<kv::SequenceChunk> next;
    std::vector<serve::RequestId> next_ids;
    std::vector<int> next_owner;
    for (std::size_t i = 0; i < chunks.size(); ++i) {
      draft_.blocks.mark_computed(ids[i],
                                  chunks[i].start + static_cast<int>(chunks[i].tokens.size()));
      if (owner[i] < 0) continue;
      Verify& v = verify[owner[i]];
      v.rows.push_back(kv::argmax(logits[i]));
      const int made = static_cast<int>(v.rows.size()) - 1;
      if (made >= v.gamma) continue;
      if (!draft_.blocks.can_append(v.id)) {
        v.gamma = made;  // the draft's cache is full: verify what it has
        continue;
      }
      copy_if_needed(draft_, draft_.blocks.append_token(v.id, v.rows.back()));
      next.push_back({std::span<const int>(v.rows).last(1), v.length - 1 + made,
                      draft_.blocks.block_table(v.id)});
      next_ids.push_back(v.id);
      next_owner.push_back(owner[i]);
    }
    chunks = std::move(next), ids = std::move(next_ids), owner = std::move(next_owner);
  }
  // 4. One target pass: every decode's last token and proposals (all their rows' logits), and
  //    every prefill chunk, side by side as chapter 11's engine runs them.
  for (Verify& v : verify) {
    int appended = 0;
    for (; appended < v.gamma && target_.blocks.can_append(v.id); ++appended)
      copy_if_needed(target_, target_.blocks.append_token(v.id, v.rows[1 + appended]));
    v.gamma = appended;  // the target's cache is full: verify fewer
    v.rows.resize(1 + appended);
  }
  std::vector<kv::SequenceChunk> target_chunks;
  for (std::size_t c = 0; c < plan.chunks.size(); ++c) {
    const serve::ScheduledChunk& s = plan.chunks[c];
    const auto& table = target_.blocks.block_table(s.id);
    if (verify_of[c] >= 0) {
      const Verify& v = verify[verify_of[c]];
      target_chunks.push_back({v.rows, s.start, table, /*all_logits=*/true});
      record.verify_rows += static_cast<int>(v.rows.size());
      ++record.decodes;
    } else {
      const auto& tokens = scheduler_.sequence(s.id).tokens;
      target_chunks.push_back({std::span(tokens).subspan(s.start, s.count), s.start, table});
      record.prefill_rows += s.count;
    }
  }
  BOOK_CHECK(record.rows() <= limits.token_budget,
             "SpecEngine: a step of " << record.rows() << " rows passes the budget of "
                                      << limits.token_budget << " (a bug)");
  const auto logits = run_chunks(target_.runner, target_chunks);
  // 5. The greedy rule: each decode keeps its proposals up to the first the target disagrees
  //    with, then the target's own token; a prefill chunk that reaches its end samples one.
  const int vocab = target_.runner.config().vocab_size;
  std::vector<std::vector<int>> emitted(plan.chunks.size());
  std::vector<int> accepted(plan.chunks.size(), 0), sampled;
  for (std::size_t c = 0; c < plan.chunks.size(); ++c) {
    if (!plan.chunks[c].samples) continue;
    std::vector<int>& e = emitted[c];
    const int v = verify_of[c];
    if (v >= 0 && verify[v].gamma > 0) {
      const auto& rows = verify[v].rows;
      const GreedyVerdict verdict = verify_greedy(std::span(rows).subspan(1), logits[c], vocab);
      accepted[c] = verdict.accepted;
      e.assign(rows.begin() + 1, rows.begin() + 1 + verdict.accepted);
      e.push_back(verdict.next_token);
      record.proposed += verify[v].gamma;
      record.accepted += verdict.accepted;
    } else {
      e.push_back(kv::argmax(std::span(logits[c]).last(vocab)));
    }
    const auto& stops = requests_.at(plan.chunks[c].id).stop_tokens;
    const auto stop = std::find_first_of(e.begin(), e.end(), stops.begin(), stops.end());
    if (stop != e.end()) e.erase(stop + 1, e.end());  // nothing after a stop token
    sampled.push_back(e.front());
    record.emitted += static_cast<int>(e.size());
  }
  scheduler_.record(plan, sampled);
  // 6. Roll both caches back to the kept tokens, give the scheduler the rest, retire.
  for (std::size_t c = 0; c < plan.chunks.size(); ++c) {
    if (!plan.chunks[c].samples) continue;
    const serve::RequestId id = plan.chunks[c].id;
    if (verify_of[c] >= 0 && verify[verify_of[c]].gamma > 0) {
      const int kept = verify[verify_of[c]].length + accepted[c];
      target_.blocks.truncate(id, kept);
      target_.blocks.mark_computed(id, kept);
      if (draft_.blocks.contains(id))
        draft_.blocks.truncate(id, std::min(draft_.blocks.length(id), kept));
    }
    const std::vector<int>& e = emitted[c];
    scheduler_.append_tokens(id, std::span(e).subspan(1));
    const serve::GenerationRequest& request = requests_.at(id);
    const serve::Sequence& sequence = scheduler_.sequence(id);
    const bool stop = std::find(request.stop_tokens.begin(), request.stop_tokens.end(), e.back()) !=
                      request.stop_tokens.end();
    first_token_step_.try_emplace(id, steps_);
    if (!stop && sequence.generated() < request.max_tokens) continue;
    serve::Completion completion;
    completion.id = id;
    completion.tokens.assign(sequence.tokens.begin() + sequence.prompt_tokens,
                             sequence.tokens.end());
    completion.reason = stop ? serve::FinishReason::kStop : serve::FinishReason::kLength;
    completion.preemptions = sequence.preemptions;
    completion.first_token_step = first_token_step_.at(id);
    completion.finish_step = steps_;
    scheduler_.finish(id);
    if (draft_.blocks.contains(id)) draft_.blocks.free(id);
    requests_.erase(id);
    first_token_step_.erase(id);
    finished_.emplace(id, std::move(completion));
    ++record.finished;
  }
  record.preempted = static_cast<int>(plan.preempted.size());
  proposed_ += record.proposed;
  accepted_ += record.accepted;
  if (config_.check_blocks) {
    target_.blocks.check_invariants();
    draft_.blocks.check_invariants();
  }
  return record;
}
//! [spec_step]

}  // namespace book::spec
