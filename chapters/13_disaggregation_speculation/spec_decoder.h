/// @file
/// Speculative decoding of one request on chapter 10's paged KV caches: a draft model and a
/// target model, each with its own ModelRunner and BlockManager. Every round the draft proposes
/// up to γ tokens one at a time, the target scores all of them in one pass (chapter 10's
/// all_logits), a rule of speculative.h keeps a prefix, and both caches are rolled back to the
/// kept tokens (BlockManager::truncate frees the blocks of rejected proposals).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "chapters/04_training_baseline/model.h"

#include "chapters/10_paged_attention/block_manager.h"
#include "chapters/10_paged_attention/model_runner.h"

namespace book::spec {

/// One model as the decoder uses it: its runner (with its cache) and the manager of that cache.
struct ServedModel {
  kv::ModelRunner& runner;   ///< runs steps; not owned
  kv::BlockManager& blocks;  ///< whose blocks the runner's cache holds; not owned
};

/// A model with everything that serves it: its own KV cache, runner and block manager.
struct ModelStack {
  std::unique_ptr<train::Model<float>> model;          ///< the weights
  std::unique_ptr<kv::PagedKvCache> cache;             ///< its keys and values
  std::unique_ptr<kv::ModelRunner> runner;             ///< runs its steps on the cache
  std::unique_ptr<kv::BlockManager> blocks;            ///< the cache's block tables
  ServedModel served() { return {*runner, *blocks}; }  ///< what the decoder takes
};

/// Serves `model` with a cache of `num_blocks` blocks of `block_size` tokens and up to `max_rows`
/// rows per step (one thread). Throws book::Error as the pieces' constructors do.
ModelStack make_stack(std::unique_ptr<train::Model<float>> model, int num_blocks, int block_size,
                      int max_rows);

/// The self-speculative draft: a copy of `target`'s first `layers` blocks with its embeddings,
/// final LayerNorm and tied head (LayerSkip-style early exit, without the training that makes
/// the early exit good). Nothing to train, same vocabulary by construction; it costs
/// layers / n_layer of the target's block weights and KV. Throws book::Error unless
/// 1 <= layers < target's n_layer, or if the target is a part of a model.
std::unique_ptr<train::Model<float>> self_draft(const train::Model<float>& target, int layers);

/// How the decoder picks tokens.
struct SpecOptions {
  int gamma = 4;              ///< draft tokens proposed per round (fewer near the end)
  double temperature = 0;     ///< 0: greedy rule; > 0: sampling rule on softmax(logits / T)
  std::uint64_t seed = 0;     ///< the sampling rule's random stream
  bool check_blocks = false;  ///< check both managers' invariants after every round (tests)
};

/// What one generate call did.
struct SpecResult {
  std::vector<int> tokens;         ///< the new tokens
  std::int64_t target_passes = 0;  ///< target steps after the prefill (verification passes)
  std::int64_t draft_steps = 0;    ///< draft steps after its prefill
  std::int64_t proposed = 0;       ///< draft tokens proposed
  std::int64_t accepted = 0;       ///< of those, kept
  /// Mean tokens a verification pass produced: (new tokens − 1) / target_passes.
  double tokens_per_pass() const;
  /// accepted / proposed: the measured acceptance rate α.
  double acceptance() const;
};

/// Speculative decoding with a draft and a target; see the file comment.
class SpeculativeDecoder {
 public:
  /// Throws book::Error if the vocabularies differ (check_same_vocabulary), γ does not fit
  /// either model's context (check_gamma), the target runner takes fewer than γ + 1 rows per
  /// step, or a manager's block size differs from its cache's.
  SpeculativeDecoder(ServedModel target, ServedModel draft, SpecOptions options);

  /// Decodes `new_tokens` tokens after `prompt` as sequence `id` in both managers, frees the
  /// sequence in both at the end. Greedy: the tokens are exactly the target's greedy tokens.
  /// Throws book::Error if the prompt is empty, new_tokens < 1, prompt + new_tokens − 1 exceeds a
  /// context, or a pool runs out of blocks.
  SpecResult generate(std::span<const int> prompt, int new_tokens, kv::SequenceId id);

  /// The same for many requests together, as sequences first_id, first_id + 1, ...: every draft
  /// step runs all the sequences still proposing as one batch, and every round's verification is
  /// one target pass over all of them (split only where the runner's max_rows demands). Each
  /// request's tokens are those it gets alone (greedy; with sampling each request draws from its
  /// own stream, seeded by the seed and its index). Throws as generate does.
  std::vector<SpecResult> generate_batch(const std::vector<std::vector<int>>& prompts,
                                         int new_tokens, kv::SequenceId first_id);

 private:
  ServedModel target_, draft_;
  SpecOptions options_;
};

/// The target alone, greedy, on the same runner and manager: the reference the greedy rule must
/// reproduce token for token, and the plain decoder the stage times against.
std::vector<int> plain_greedy(ServedModel target, std::span<const int> prompt, int new_tokens,
                              kv::SequenceId id);

}  // namespace book::spec
