#include "chapters/13_disaggregation_speculation/spec_decoder.h"

#include <algorithm>
#include <cmath>

#include "chapters/10_paged_attention/decoding.h"
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

ModelStack make_stack(std::unique_ptr<train::Model<float>> model, int num_blocks, int block_size,
                      int max_rows) {
  BOOK_CHECK(model != nullptr, "make_stack: no model");
  ModelStack stack;
  stack.cache =
      std::make_unique<kv::PagedKvCache>(kv::kv_shape_of(model->config()), num_blocks, block_size);
  stack.runner = std::make_unique<kv::ModelRunner>(*model, *stack.cache, max_rows);
  stack.blocks = std::make_unique<kv::BlockManager>(num_blocks, block_size);
  stack.model = std::move(model);
  return stack;
}

//! [self_draft]
std::unique_ptr<train::Model<float>> self_draft(const train::Model<float>& target, int layers) {
  train::Config config = target.config();
  BOOK_CHECK(layers >= 1 && layers < config.n_layer,
             "self_draft: the draft keeps 1 to " << config.n_layer - 1 << " of the target's "
                                                 << config.n_layer << " layers, not " << layers);
  BOOK_CHECK(target.layout().total() == static_cast<std::size_t>(config.parameter_count()),
             "self_draft: the target must be a whole model, not a part");
  config.n_layer = layers;
  auto draft = std::make_unique<train::Model<float>>(config, 1);
  // Every tensor of the shallower model has a namesake in the target ("wte", "h0.w_qkv", ...,
  // "lnf_gain"): copy it by name, so the draft is the target with its upper blocks skipped.
  for (const train::TensorSlot& slot : draft->layout().slots()) {
    const train::TensorSlot& source = target.layout().find(slot.name);
    BOOK_CHECK(source.size() == slot.size(), "self_draft: tensor " << slot.name << " differs");
    std::copy_n(target.params().data() + source.offset, slot.size(),
                draft->params().data() + slot.offset);
  }
  return draft;
}
//! [self_draft]

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

//! [round]
SpecResult SpeculativeDecoder::generate(std::span<const int> prompt, int new_tokens,
                                        kv::SequenceId id) {
  check_request(target_, prompt, new_tokens);
  check_request(draft_, prompt, new_tokens);
  const int vocab = target_.runner.config().vocab_size;
  const bool greedy = options_.temperature == 0;
  Rng rng(options_.seed);
  auto pick = [&](std::span<const float> row) {
    return greedy ? kv::argmax(row)
                  : sample_index(softmax(row, options_.temperature), rng.uniform());
  };
  SpecResult result;
  std::vector<int> seq(prompt.begin(), prompt.end());
  seq.push_back(pick(prefill(target_, id, prompt)));
  prefill(draft_, id, prompt);
  result.tokens.push_back(seq.back());
  append(target_, id, seq.back());  // the target's invariant: every token but the last computed
  while (static_cast<int>(result.tokens.size()) < new_tokens) {
    const int length = static_cast<int>(seq.size());
    const int gamma =
        std::min(options_.gamma, new_tokens - static_cast<int>(result.tokens.size()) - 1);
    // 1. The draft catches up with the accepted tokens, then proposes gamma, one step each.
    std::vector<int> draft;
    std::vector<std::vector<double>> q;
    for (int t = draft_.blocks.length(id); t < length && gamma > 0; ++t) append(draft_, id, seq[t]);
    for (int j = 0; j < gamma; ++j) {
      if (j > 0) append(draft_, id, draft.back());
      const int start = j == 0 ? draft_.blocks.computed(id) : length - 1 + j;
      const auto tokens =
          j == 0 ? std::span<const int>(seq).subspan(start) : std::span<const int>(draft).last(1);
      const auto logits = run_tokens(draft_, id, tokens, start);
      if (greedy) {
        draft.push_back(kv::argmax(logits));
      } else {
        q.push_back(softmax(logits, options_.temperature));
        draft.push_back(sample_index(q.back(), rng.uniform()));
      }
      ++result.draft_steps;
    }
    // 2. One target pass scores the last accepted token and every proposal.
    for (const int token : draft) append(target_, id, token);
    std::vector<int> rows{seq.back()};
    rows.insert(rows.end(), draft.begin(), draft.end());
    const auto logits = run_tokens(target_, id, rows, length - 1, /*all_logits=*/true);
    ++result.target_passes;
    // 3. The rule keeps a prefix of the proposals and adds the target's own next token.
    int accepted = 0, next = 0;
    if (gamma == 0) {
      next = pick(logits);
    } else if (greedy) {
      const GreedyVerdict verdict = verify_greedy(draft, logits, vocab);
      accepted = verdict.accepted, next = verdict.next_token;
    } else {
      for (; accepted < gamma; ++accepted) {
        const auto p =
            softmax(std::span(logits).subspan(accepted * vocab, vocab), options_.temperature);
        const SampleVerdict v =
            rejection_sample(p, q[accepted], draft[accepted], rng.uniform(), rng.uniform());
        if (!v.accepted) {
          next = v.token;
          break;
        }
      }
      if (accepted == gamma) next = pick(std::span(logits).last(vocab));  // the bonus token
    }
    result.proposed += gamma;
    result.accepted += accepted;
    // 4. Roll both caches back to the kept tokens: the rejected proposals' blocks are freed.
    target_.blocks.truncate(id, length + accepted);
    append(target_, id, next);
    const int draft_keep = std::min(draft_.blocks.length(id), length + accepted);
    draft_.blocks.truncate(id, draft_keep);
    seq.insert(seq.end(), draft.begin(), draft.begin() + accepted);
    seq.push_back(next);
    result.tokens.insert(result.tokens.end(), draft.begin(), draft.begin() + accepted);
    result.tokens.push_back(next);
    if (options_.check_blocks) {
      target_.blocks.check_invariants();
      draft_.blocks.check_invariants();
    }
  }
  target_.blocks.free(id);
  draft_.blocks.free(id);
  return result;
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
