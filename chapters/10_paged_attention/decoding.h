/// @file
/// Greedy decoding with a KV cache, three ways: on the paged cache (BlockManager), on the
/// contiguous baseline, and without a cache (chapter 4's full forward pass for every new token).
/// The tests compare them; the stage grades the trained addition model with them.
///
/// These helpers decode one fixed batch: every prompt is admitted at the start and runs to the
/// end. Prompts longer than the runner's max_rows are prefilled in chunks. There is no scheduler,
/// so running out of blocks is an error here; chapter 11's engine admits, preempts and refills.
#pragma once

#include <span>
#include <vector>

#include "chapters/04_training_baseline/model.h"
#include "chapters/10_paged_attention/block_manager.h"
#include "chapters/10_paged_attention/kv_cache.h"
#include "chapters/10_paged_attention/model_runner.h"

namespace book::kv {

/// Index of the largest logit, the first one on ties: greedy decoding's choice.
int argmax(std::span<const float> logits);

/// Greedy decoding of `prompts` together: each prompt is admitted as sequence first_id + i
/// (reusing cached prefix blocks), prefilled (in chunks of at most the runner's max_rows tokens),
/// then decoded one token per sequence per step until it has `new_tokens` new tokens; the
/// sequences are freed at the end. `manager` must describe the runner's cache (same block size and
/// block count). Throws book::Error if the blocks run out, or a sequence would pass the model's
/// context.
std::vector<std::vector<int>> generate_paged(ModelRunner& runner, BlockManager& manager,
                                             std::span<const std::vector<int>> prompts,
                                             int new_tokens, SequenceId first_id = 0);

/// The same on the contiguous baseline: each prompt takes one max-length slot of `cache`, whose
/// storage the runner must use. Throws book::Error if there are more prompts than slots or a
/// sequence would pass max_len.
std::vector<std::vector<int>> generate_contiguous(ModelRunner& runner, ContiguousKvCache& cache,
                                                  std::span<const std::vector<int>> prompts,
                                                  int new_tokens);

/// The same without a KV cache: for every new token, chapter 4's full forward pass over the
/// whole sequence so far (what chapter 4's Trainer::answer does; O(n²) work per sequence). The
/// reference the cached decoders must agree with.
std::vector<std::vector<int>> generate_full_forward(train::Model<float>& model,
                                                    std::span<const std::vector<int>> prompts,
                                                    int new_tokens);

}  // namespace book::kv
