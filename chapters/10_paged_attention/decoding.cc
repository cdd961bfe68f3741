#include "chapters/10_paged_attention/decoding.h"

#include <algorithm>
#include <functional>

#include "common/check.h"

namespace book::kv {
namespace {

// What the shared loop needs from a cache: admit sequence i (returning the prompt tokens already
// cached), its block table, "positions [0, n) are written", and "reserve a slot for this token".
struct CacheHooks {
  std::function<int(int)> admit;
  std::function<std::span<const BlockId>(int)> table;
  std::function<void(int, int)> computed;
  std::function<void(int, int)> append;
};

void check_request(const ModelRunner& runner, std::span<const std::vector<int>> prompts,
                   int new_tokens) {
  BOOK_CHECK(new_tokens >= 1, "generate: new_tokens must be >= 1, got " << new_tokens);
  for (std::size_t i = 0; i < prompts.size(); ++i) {
    BOOK_CHECK(!prompts[i].empty(), "generate: prompt " << i << " is empty");
    const std::size_t total = prompts[i].size() + new_tokens - 1;  // the last token is not run
    BOOK_CHECK(total <= static_cast<std::size_t>(runner.config().context),
               "generate: prompt " << i << " (" << prompts[i].size() << " tokens) plus "
                                   << new_tokens
                                   << " new tokens is longer than the model's context of "
                                   << runner.config().context << " positions");
  }
}

//! [decode_loop]
std::vector<std::vector<int>> decode(ModelRunner& runner, std::span<const std::vector<int>> prompts,
                                     int new_tokens, const CacheHooks& hooks) {
  check_request(runner, prompts, new_tokens);
  const int n = static_cast<int>(prompts.size()), vocab = runner.config().vocab_size;
  std::vector<std::vector<int>> outputs(n);
  std::vector<int> done(n);  // prompt tokens prefilled so far
  for (int i = 0; i < n; ++i) done[i] = hooks.admit(i);
  // Prefill: chunks of at most max_rows tokens per step; a prompt's last chunk gives its first
  // new token.
  for (int next = 0; next < n;) {
    std::vector<SequenceChunk> chunks;
    std::vector<int> owner;
    int rows = 0;
    for (int i = next; i < n && rows < runner.max_rows(); ++i) {
      const auto& prompt = prompts[i];
      const int take =
          std::min<int>(static_cast<int>(prompt.size()) - done[i], runner.max_rows() - rows);
      chunks.push_back({std::span(prompt).subspan(done[i], take), done[i], hooks.table(i)});
      owner.push_back(i);
      rows += take;
      if (done[i] + take < static_cast<int>(prompt.size())) break;  // the rest next step
    }
    const auto logits = runner.run(chunks);
    for (std::size_t c = 0; c < chunks.size(); ++c) {
      const int i = owner[c];
      done[i] += static_cast<int>(chunks[c].tokens.size());
      hooks.computed(i, done[i]);
      if (done[i] == static_cast<int>(prompts[i].size())) {
        outputs[i].push_back(argmax(logits.subspan(c * vocab, vocab)));
        next = i + 1;
      }
    }
  }
  // Decode: each step appends every sequence's last token and runs one row per sequence.
  for (int step = 1; step < new_tokens; ++step) {
    std::vector<SequenceChunk> chunks;
    for (int i = 0; i < n; ++i) {
      hooks.append(i, outputs[i].back());
      const int position = static_cast<int>(prompts[i].size()) + step - 1;
      chunks.push_back({std::span(outputs[i]).last(1), position, hooks.table(i)});
    }
    for (std::size_t c = 0; c < chunks.size(); c += runner.max_rows()) {
      const auto batch =
          std::span(chunks).subspan(c, std::min<std::size_t>(runner.max_rows(), chunks.size() - c));
      const auto logits = runner.run(batch);
      for (std::size_t j = 0; j < batch.size(); ++j) {
        const int i = static_cast<int>(c + j);
        hooks.computed(i, batch[j].start + 1);
        outputs[i].push_back(argmax(logits.subspan(j * vocab, vocab)));
      }
    }
  }
  return outputs;
}
//! [decode_loop]

}  // namespace

int argmax(std::span<const float> logits) {
  BOOK_CHECK(!logits.empty(), "argmax: no logits");
  return static_cast<int>(std::max_element(logits.begin(), logits.end()) - logits.begin());
}

std::vector<std::vector<int>> generate_paged(ModelRunner& runner, BlockManager& manager,
                                             std::span<const std::vector<int>> prompts,
                                             int new_tokens, SequenceId first_id) {
  BOOK_CHECK(manager.block_size() == runner.cache().block_size() &&
                 manager.num_blocks() == runner.cache().num_blocks(),
             "generate_paged: the manager has "
                 << manager.num_blocks() << " blocks of " << manager.block_size() << ", the cache "
                 << runner.cache().num_blocks() << " of " << runner.cache().block_size());
  std::vector<SequenceId> admitted;
  const CacheHooks hooks{
      [&](int i) {
        const Admission admission = manager.add_sequence(first_id + i, prompts[i]);
        BOOK_CHECK(admission.ok, "generate_paged: out of KV blocks admitting prompt "
                                     << i << " (" << manager.num_free_blocks() << " free, "
                                     << manager.blocks_needed(prompts[i])
                                     << " needed); this helper has no scheduler to wait or "
                                        "preempt (chapter 11's engine does)");
        admitted.push_back(first_id + i);
        return admission.cached_tokens;
      },
      [&](int i) { return std::span<const BlockId>(manager.block_table(first_id + i)); },
      [&](int i, int tokens) { manager.mark_computed(first_id + i, tokens); },
      [&](int i, int token) {
        const SlotReservation slot = manager.append_token(first_id + i, token);
        BOOK_CHECK(slot.ok, "generate_paged: out of KV blocks appending to sequence "
                                << first_id + i << "; this helper has no scheduler to preempt");
        if (slot.copy) runner.cache().copy(*slot.copy);  // copy-on-write before the write
      }};
  try {
    auto outputs = decode(runner, prompts, new_tokens, hooks);
    for (const SequenceId id : admitted) manager.free(id);
    return outputs;
  } catch (...) {
    for (const SequenceId id : admitted) manager.free(id);  // leave the manager as it was
    throw;
  }
}

std::vector<std::vector<int>> generate_contiguous(ModelRunner& runner, ContiguousKvCache& cache,
                                                  std::span<const std::vector<int>> prompts,
                                                  int new_tokens) {
  BOOK_CHECK(&runner.cache() == &cache.storage(),
             "generate_contiguous: the runner must run on this contiguous cache's storage");
  std::vector<BlockTable> tables(prompts.size());
  const CacheHooks hooks{
      [&](int i) {
        const auto slot = cache.acquire();
        BOOK_CHECK(slot.has_value(), "generate_contiguous: " << prompts.size()
                                                             << " prompts, but the cache has "
                                                             << cache.max_sequences() << " slots");
        tables[i] = {*slot};
        return 0;
      },
      [&](int i) { return std::span<const BlockId>(tables[i]); }, [](int, int) {},
      [](int, int) {}};  // the slot was reserved at full length up front
  try {
    auto outputs = decode(runner, prompts, new_tokens, hooks);
    for (const auto& table : tables) cache.release(table[0]);
    return outputs;
  } catch (...) {
    for (const auto& table : tables)
      if (!table.empty()) cache.release(table[0]);
    throw;
  }
}

std::vector<std::vector<int>> generate_full_forward(train::Model<float>& model,
                                                    std::span<const std::vector<int>> prompts,
                                                    int new_tokens) {
  const int vocab = model.config().vocab_size;
  std::vector<std::vector<int>> outputs;
  for (const auto& prompt : prompts) {
    std::vector<int> sequence = prompt, generated;
    for (int k = 0; k < new_tokens; ++k) {
      const int len = static_cast<int>(sequence.size());
      model.forward(sequence.data(), nullptr, 1, len);
      const int token = argmax({model.logits() + static_cast<std::size_t>(len - 1) * vocab,
                                static_cast<std::size_t>(vocab)});
      generated.push_back(token);
      sequence.push_back(token);
    }
    outputs.push_back(generated);
  }
  return outputs;
}

}  // namespace book::kv
