/// @file
/// Chapter 4's GPT served from a KV cache: one model step runs the new tokens of a batch of
/// sequences (whole prompts, prefill chunks, or one decoded token each) and returns their logits.
///
/// A step stacks the new tokens of every sequence into one matrix, so each layer's projections are
/// one GEMM for the whole batch (chapter 4's block_forward_rows); only attention is per sequence:
/// each new token's keys and values are written into its sequence's slot first, then the token
/// attends to positions [0, its own] through the sequence's block table. Decoding token by token
/// with this runner gives the logits of chapter 4's full forward pass over the whole sequence, to
/// within float rounding (attention sums in another order), and the same bits whichever cache
/// holds the keys and values (paged with any block size, or contiguous).
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "chapters/04_training_baseline/block.h"
#include "chapters/04_training_baseline/config.h"
#include "chapters/04_training_baseline/model.h"
#include "chapters/04_training_baseline/parameters.h"
#include "chapters/10_paged_attention/attention_cpu.h"
#include "chapters/10_paged_attention/kv_cache.h"

namespace book::kv {

/// The KV-cache shape of a chapter-4 model: its layers, heads and head size.
KvShape kv_shape_of(const train::Config& config);

/// Which attention kernel a runner uses.
enum class AttentionKernel {
  kReference,  ///< paged_attention_reference (the exercise kv.paged_attention)
  kFast,       ///< CpuPagedAttention (vectorised, threads)
};

/// One sequence's share of a model step.
struct SequenceChunk {
  /// The new tokens, at positions [start, start + tokens.size()): a prompt, a chunk of one, or the
  /// last sampled token.
  std::span<const int> tokens;
  /// Tokens of the sequence already in the cache (0 for a fresh prompt; the prefix-cache hit).
  int start = 0;
  /// The sequence's blocks, covering at least start + tokens.size() positions.
  std::span<const BlockId> block_table;
  /// Logits for every new token (scoring a prompt, tests), instead of only the last one's.
  bool all_logits = false;
};

/// Runs a whole chapter-4 Model<float> over a batch of SequenceChunk; see the file comment.
class ModelRunner {
 public:
  /// Serves `model` (whole, one device; not owned) with keys and values in `cache` (not owned;
  /// its shape must be kv_shape_of(model.config())), up to `max_rows` new tokens per step.
  /// Throws book::Error if the model is a part, the shapes differ, or max_rows < 1.
  ModelRunner(train::Model<float>& model, PagedKvCache& cache, int max_rows,
              AttentionKernel kernel = AttentionKernel::kFast, int threads = 1);

  /// One model step: writes every new token's keys and values into its slot in the cache and
  /// returns the logits, [rows, vocab] row-major: for each chunk in order, its last token's row,
  /// or all of its tokens' rows when all_logits. Valid until the next run. Throws book::Error
  /// (before touching the cache) if a position reaches the model's context, a table is too short,
  /// a block is outside the cache, a token is outside the vocabulary, the new tokens exceed
  /// max_rows, or the cache is INT8 and no attention was given (use_attention).
  std::span<const float> run(std::span<const SequenceChunk> chunks);

  /// A block's projection as the caller computes it, for layer `layer`: y [rows, out] = x [rows,
  /// in] · W + b for the projection `which` (in and out as train::BlockTensors gives them),
  /// overwriting y.
  using LayerLinear =
      std::function<void(int layer, train::Projection which, const float* x, int rows, float* y)>;
  /// Computes every block's four projections with `linear` from now on (chapter 14 serves
  /// quantised weights this way); an empty one goes back to the model's FP32 weights. The
  /// embeddings, LayerNorms and the tied head stay the model's FP32 tensors.
  void use_linear(LayerLinear linear) { linear_ = std::move(linear); }

  /// One layer's attention as the caller computes it: out = softmax(q·Kᵀ/√d)·V for every query,
  /// over layer `layer` of `cache`, after the runner wrote the step's keys and values there.
  using LayerAttention = std::function<void(const PagedKvCache& cache, int layer,
                                            std::span<const AttentionQuery> queries)>;
  /// Runs every layer's attention with `attention` from now on instead of this chapter's kernels:
  /// how a cache they cannot read is served (an INT8 cache: chapter 14's kernel); an empty one
  /// goes back to the kernel chosen at construction. run() refuses an INT8 cache without one.
  void use_attention(LayerAttention attention) { attention_ = std::move(attention); }

  const train::Config& config() const { return config_; }  ///< the model's shape
  PagedKvCache& cache() { return cache_; }                 ///< where K and V live
  int max_rows() const { return max_rows_; }               ///< new tokens per step

 private:
  void check(std::span<const SequenceChunk> chunks) const;
  void attention(int layer, const float* qkv, float* att_out);

  train::Config config_;
  train::ModelTensors<float> weights_;
  PagedKvCache& cache_;
  int max_rows_;
  AttentionKernel kernel_;
  CpuPagedAttention fast_;
  train::BlockActivations<float> acts_;
  train::BlockWorkspace<float> workspace_;
  std::vector<float> stream_, next_stream_, head_in_, head_out_, mean_, rstd_, logits_;
  // Per row of the step: its chunk and position.
  std::vector<int> row_chunk_, row_position_;
  std::span<const SequenceChunk> chunks_;
  std::vector<AttentionQuery> queries_;
  LayerLinear linear_;
  LayerAttention attention_;
};

}  // namespace book::kv
