#include "chapters/13_disaggregation_speculation/spec_decoder.h"

#include <algorithm>
#include <cmath>

#include "chapters/10_paged_attention/decoding.h"
#include "chapters/13_disaggregation_speculation/spec_batch.h"
#include "chapters/13_disaggregation_speculation/speculative.h"
#include "common/check.h"
#include "common/rng.h"

namespace book::spec {
namespace {

std::vector<double> softmax(std::span<const float> logits, double temperature) {
  const float top = *std::max_element(logits.begin(), logits.end());
  std::vector<double> p(logits.size());
  double sum = 0;
  for (std::size_t i = 0; i < p.size(); ++i)
    sum += p[i] = std::exp((static_cast<double>(logits[i]) - top) / temperature);
  for (double& x : p) x /= sum;
  return p;
}

// Runs `tokens` at positions [start, start + size) of sequence `id` in max_rows-sized steps,
// marks them computed, and returns the logits of the last one (or of all, with all_logits, when
// they fit in one step).
std::vector<float> run_tokens(ServedModel model, kv::SequenceId id, std::span<const int> tokens,
                              int start, bool all_logits = false) {
  std::vector<float> out;
  const int max_rows = model.runner.max_rows();
  BOOK_CHECK(!all_logits || static_cast<int>(tokens.size()) <= max_rows,
             "speculative decoding: a verification pass of "
                 << tokens.size() << " rows exceeds the runner's " << max_rows << " rows per step");
  for (std::size_t done = 0; done < tokens.size();) {
    const std::size_t take = std::min<std::size_t>(max_rows, tokens.size() - done);
    const kv::SequenceChunk chunk{tokens.subspan(done, take), start + static_cast<int>(done),
                                  model.blocks.block_table(id), all_logits};
    const auto logits = model.runner.run(std::span(&chunk, 1));
    out.assign(logits.begin(), logits.end());
    done += take;
    model.blocks.mark_computed(id, start + static_cast<int>(done));
  }
  return out;
}

void append(ServedModel model, kv::SequenceId id, int token) {
  const auto reservation = model.blocks.append_token(id, token);
  BOOK_CHECK(reservation.ok, "speculative decoding: the KV cache is out of blocks ("
                                 << model.blocks.num_blocks() << " blocks of "
                                 << model.blocks.block_size() << " tokens)");
  if (reservation.copy) model.runner.cache().copy(*reservation.copy);
}

// Admits the prompt and prefills it; returns the last prompt token's logits.
std::vector<float> prefill(ServedModel model, kv::SequenceId id, std::span<const int> prompt) {
  const auto admission = model.blocks.add_sequence(id, prompt);
  BOOK_CHECK(admission.ok, "speculative decoding: the KV cache has no room for a prompt of "
                               << prompt.size() << " tokens");
  return run_tokens(model, id, prompt.subspan(admission.cached_tokens), admission.cached_tokens);
}

void check_request(const ServedModel& model, std::span<const int> prompt, int new_tokens) {
  BOOK_CHECK(!prompt.empty(), "speculative decoding: the prompt is empty");
  BOOK_CHECK(new_tokens >= 1, "speculative decoding: new_tokens must be >= 1, got " << new_tokens);
  const int context = model.runner.config().context;
  BOOK_CHECK(static_cast<int>(prompt.size()) + new_tokens - 1 <= context,
             "speculative decoding: a prompt of " << prompt.size() << " tokens plus " << new_tokens
                                                  << " new tokens passes the context of " << context
                                                  << " positions");
}

}  // namespace

double SpecResult::tokens_per_pass() const {
  return target_passes == 0 ? 0 : static_cast<double>(tokens.size() - 1) / target_passes;
}

double SpecResult::acceptance() const {
  return proposed == 0 ? 0 : static_cast<double>(accepted) / static_cast<double>(proposed);
}

SpeculativeDecoder::SpeculativeDecoder(ServedModel target, ServedModel draft, SpecOptions options)
    : target_(target), draft_(draft), options_(options) {
  check_same_vocabulary(target.runner.config().vocab_size, draft.runner.config().vocab_size);
  check_gamma(options.gamma, target.runner.config().context);
  check_gamma(options.gamma, draft.runner.config().context);
  BOOK_CHECK(target.runner.max_rows() >= options.gamma + 1,
             "speculative decoding: gamma = " << options.gamma << " needs a target runner of "
                                              << options.gamma + 1 << " rows per step, it has "
                                              << target.runner.max_rows());
  BOOK_CHECK(options.temperature >= 0 && std::isfinite(options.temperature),
             "speculative decoding: temperature must be >= 0, got " << options.temperature);
  for (const ServedModel* m : {&target_, &draft_})
    BOOK_CHECK(m->blocks.block_size() == m->runner.cache().block_size(),
               "speculative decoding: a block manager of block size "
                   << m->blocks.block_size() << " over a cache of block size "
                   << m->runner.cache().block_size());
}

SpecResult SpeculativeDecoder::generate(std::span<const int> prompt, int new_tokens,
                                        kv::SequenceId id) {
  const std::vector<std::vector<int>> prompts{{prompt.begin(), prompt.end()}};
  return std::move(generate_batch(prompts, new_tokens, id).front());
}

namespace {

// One request's state between rounds.
struct Live {
  kv::SequenceId id = 0;
  std::vector<int> seq;                // prompt and every token so far
  std::vector<int> draft;              // this round's proposals
  std::vector<std::vector<double>> q;  // their draft distributions (sampling)
  int gamma = 0;                       // proposals this round
  std::vector<float> logits;           // this round's target rows
  Rng rng;
};

std::vector<kv::SequenceId> live_ids(const std::vector<Live>& live) {
  std::vector<kv::SequenceId> ids;
  for (const Live& r : live) ids.push_back(r.id);
  return ids;
}

// Admits every prompt and prefills them together; returns each one's last-token logits. A prompt
// longer than the runner's step is prefilled alone in chunks.
std::vector<std::vector<float>> prefill_batch(ServedModel model,
                                              const std::vector<kv::SequenceId>& ids,
                                              const std::vector<std::vector<int>>& prompts) {
  std::vector<std::vector<float>> out(prompts.size());
  std::vector<kv::SequenceChunk> chunks;
  std::vector<std::size_t> owner;
  for (std::size_t i = 0; i < prompts.size(); ++i) {
    const int rows = static_cast<int>(prompts[i].size());
    if (rows > model.runner.max_rows()) {
      out[i] = prefill(model, ids[i], prompts[i]);
      continue;
    }
    const auto admission = model.blocks.add_sequence(ids[i], prompts[i]);
    BOOK_CHECK(admission.ok, "speculative decoding: the KV cache has no room for a prompt of "
                                 << rows << " tokens");
    chunks.push_back({std::span(prompts[i]).subspan(admission.cached_tokens),
                      admission.cached_tokens, model.blocks.block_table(ids[i])});
    owner.push_back(i);
  }
  auto logits = run_chunks(model.runner, chunks);
  for (std::size_t c = 0; c < chunks.size(); ++c) {
    model.blocks.mark_computed(ids[owner[c]], static_cast<int>(prompts[owner[c]].size()));
    out[owner[c]] = std::move(logits[c]);
  }
  return out;
}

}  // namespace

//! [round]
std::vector<SpecResult> SpeculativeDecoder::generate_batch(
    const std::vector<std::vector<int>>& prompts, int new_tokens, kv::SequenceId first_id) {
  for (const auto& prompt : prompts) {
    check_request(target_, prompt, new_tokens);
    check_request(draft_, prompt, new_tokens);
  }
  const int vocab = target_.runner.config().vocab_size;
  const bool greedy = options_.temperature == 0;
  auto pick = [&](std::span<const float> row, Rng& rng) {
    return greedy ? kv::argmax(row)
                  : sample_index(softmax(row, options_.temperature), rng.uniform());
  };
  std::vector<SpecResult> results(prompts.size());
  std::vector<Live> live(prompts.size());
  for (std::size_t i = 0; i < prompts.size(); ++i) {
    live[i].id = first_id + static_cast<kv::SequenceId>(i);
    live[i].rng.reseed(options_.seed + 0x9e3779b97f4a7c15ULL * i);  // each request its own stream
    live[i].seq = prompts[i];
  }
  // Prefill every prompt in both models, all prompts in as few steps as fit (one weight read
  // per step, as chapter 10's batched decoding does).
  const auto first_logits = prefill_batch(target_, live_ids(live), prompts);
  prefill_batch(draft_, live_ids(live), prompts);
  for (std::size_t i = 0; i < prompts.size(); ++i) {
    Live& r = live[i];
    r.seq.push_back(pick(first_logits[i], r.rng));
    results[i].tokens.push_back(r.seq.back());
    append(target_, r.id, r.seq.back());  // every token but the last is computed
  }
  auto left = [&](std::size_t i) {
    return new_tokens - static_cast<int>(results[i].tokens.size());
  };
  for (;;) {
    std::vector<std::size_t> active;
    for (std::size_t i = 0; i < live.size(); ++i)
      if (left(i) > 0) active.push_back(i);
    if (active.empty()) break;
    // 1. The draft proposes: step j runs every sequence that still proposes, in one batch (its
    //    first step also catches the draft up with the tokens accepted last round).
    int max_gamma = 0;
    for (const std::size_t i : active) {
      Live& r = live[i];
      r.gamma = std::min(options_.gamma, left(i) - 1);  // never propose past the last token
      r.draft.clear(), r.q.clear();
      max_gamma = std::max(max_gamma, r.gamma);
      for (int t = draft_.blocks.length(r.id); t < static_cast<int>(r.seq.size()) && r.gamma > 0;
           ++t)
        append(draft_, r.id, r.seq[t]);
    }
    for (int j = 0; j < max_gamma; ++j) {
      std::vector<kv::SequenceChunk> chunks;
      std::vector<std::size_t> owner;
      for (const std::size_t i : active) {
        Live& r = live[i];
        if (j >= r.gamma) continue;
        if (j > 0) append(draft_, r.id, r.draft.back());
        const int start =
            j == 0 ? draft_.blocks.computed(r.id) : static_cast<int>(r.seq.size()) - 1 + j;
        const auto tokens = j == 0 ? std::span<const int>(r.seq).subspan(start)
                                   : std::span<const int>(r.draft).last(1);
        chunks.push_back({tokens, start, draft_.blocks.block_table(r.id)});
        owner.push_back(i);
      }
      const auto logits = run_chunks(draft_.runner, chunks);
      for (std::size_t c = 0; c < chunks.size(); ++c) {
        Live& r = live[owner[c]];
        draft_.blocks.mark_computed(r.id,
                                    chunks[c].start + static_cast<int>(chunks[c].tokens.size()));
        if (greedy) {
          r.draft.push_back(kv::argmax(logits[c]));
        } else {
          r.q.push_back(softmax(logits[c], options_.temperature));
          r.draft.push_back(sample_index(r.q.back(), r.rng.uniform()));
        }
        ++results[owner[c]].draft_steps;
      }
    }
    // 2. One target pass scores every sequence's last token and proposals.
    std::vector<std::vector<int>> rows(active.size());
    std::vector<kv::SequenceChunk> chunks;
    for (std::size_t a = 0; a < active.size(); ++a) {
      Live& r = live[active[a]];
      for (const int token : r.draft) append(target_, r.id, token);
      rows[a] = {r.seq.back()};
      rows[a].insert(rows[a].end(), r.draft.begin(), r.draft.end());
      chunks.push_back({rows[a], static_cast<int>(r.seq.size()) - 1,
                        target_.blocks.block_table(r.id), /*all_logits=*/true});
    }
    auto logits = run_chunks(target_.runner, chunks);
    // 3. Each rule keeps a prefix and adds the target's own token; 4. both caches roll back.
    for (std::size_t a = 0; a < active.size(); ++a) {
      Live& r = live[active[a]];
      SpecResult& result = results[active[a]];
      const int length = static_cast<int>(r.seq.size());
      target_.blocks.mark_computed(r.id, length + r.gamma);
      ++result.target_passes;
      const std::span<const float> rows_logits = logits[a];
      int accepted = 0, next = 0;
      if (r.gamma == 0) {
        next = pick(rows_logits, r.rng);
      } else if (greedy) {
        const GreedyVerdict verdict = verify_greedy(r.draft, rows_logits, vocab);
        accepted = verdict.accepted, next = verdict.next_token;
      } else {
        for (; accepted < r.gamma; ++accepted) {
          const auto p =
              softmax(rows_logits.subspan(accepted * vocab, vocab), options_.temperature);
          const double u_accept = r.rng.uniform(), u_residual = r.rng.uniform();
          const SampleVerdict v =
              rejection_sample(p, r.q[accepted], r.draft[accepted], u_accept, u_residual);
          if (!v.accepted) {
            next = v.token;
            break;
          }
        }
        if (accepted == r.gamma) next = pick(rows_logits.last(vocab), r.rng);  // the bonus token
      }
      result.proposed += r.gamma;
      result.accepted += accepted;
      target_.blocks.truncate(r.id, length + accepted);
      append(target_, r.id, next);
      draft_.blocks.truncate(r.id, std::min(draft_.blocks.length(r.id), length + accepted));
      r.seq.insert(r.seq.end(), r.draft.begin(), r.draft.begin() + accepted);
      r.seq.push_back(next);
      result.tokens.insert(result.tokens.end(), r.draft.begin(), r.draft.begin() + accepted);
      result.tokens.push_back(next);
    }
    if (options_.check_blocks) {
      target_.blocks.check_invariants();
      draft_.blocks.check_invariants();
    }
  }
  for (const Live& r : live) {
    target_.blocks.free(r.id);
    draft_.blocks.free(r.id);
  }
  return results;
}
//! [round]

std::vector<int> plain_greedy(ServedModel target, std::span<const int> prompt, int new_tokens,
                              kv::SequenceId id) {
  check_request(target, prompt, new_tokens);
  std::vector<int> out{kv::argmax(prefill(target, id, prompt))};
  while (static_cast<int>(out.size()) < new_tokens) {
    const int position = static_cast<int>(prompt.size() + out.size()) - 1;
    append(target, id, out.back());
    out.push_back(kv::argmax(run_tokens(target, id, std::span(out).last(1), position)));
  }
  target.blocks.free(id);
  return out;
}

}  // namespace book::spec
