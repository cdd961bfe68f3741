/// @file
/// One transformer block, forward and backward, on the tensor-parallel slice of its heads and
/// MLP hidden units that this rank stores (Megatron-LM's column/row split), so that a
/// tensor-parallel rank runs this same block holding only its shard.
///
/// x → r = x + Attn(LN1(x)) → y = r + MLP(LN2(r)). The LayerNorms and the four projections go
/// through the seam (tensor_parallelism.h): on one device (slice 0 of 1, no seam given) they are
/// chapter 4's layers on whole tensors; on a tensor-parallel rank the seam's projections are this
/// rank's share, and the seam sums them over the group.
#pragma once

#include <cstddef>
#include <functional>

#include "chapters/04_training_baseline/config.h"
#include "chapters/04_training_baseline/parameters.h"
#include "chapters/04_training_baseline/partition.h"
#include "chapters/04_training_baseline/tensor_parallelism.h"
#include "common/memory.h"

namespace book::train {

/// What a block's forward pass keeps for its backward pass, for up to max_batch × max_seq_len
/// rows of one tensor-parallel slice (w = d_model/t, f = d_ff/t, h = n_head/t), reported to a
/// tracker as MemoryCategory::kActivations: per held row (all rows, unless the seam holds a
/// share of them between the regions) 3C (ln1, residual, ln2) + 4 (LayerNorm statistics), per
/// row 3w (qkv) + w (att_out) + 2f (fc, fc_gelu) numbers, plus h·T per row for the attention
/// probabilities.
template <typename T>
struct BlockActivations {
  TrackedBuffer<T> ln1;       ///< [held, C] LN1 output
  TrackedBuffer<T> ln1_mean;  ///< [held] LN1 row means
  TrackedBuffer<T> ln1_rstd;  ///< [held] LN1 reciprocal standard deviations
  TrackedBuffer<T> qkv;       ///< [N, 3w] this slice's q, k, v
  TrackedBuffer<T> att;       ///< [B, h, T, T] softmax probabilities
  TrackedBuffer<T> att_out;   ///< [N, w] attention output before projection
  TrackedBuffer<T> residual;  ///< [held, C] r = x + attention
  TrackedBuffer<T> ln2;       ///< [held, C] LN2 output
  TrackedBuffer<T> ln2_mean;  ///< [held] LN2 row means
  TrackedBuffer<T> ln2_rstd;  ///< [held] LN2 reciprocal standard deviations
  TrackedBuffer<T> fc;        ///< [N, f] MLP pre-activation
  TrackedBuffer<T> fc_gelu;   ///< [N, f] MLP post-GELU
  int max_batch = 0;          ///< sequences it has room for
  int max_seq_len = 0;        ///< positions per sequence it has room for

  BlockActivations() = default;
  /// Room for `max_batch` × `max_seq_len` rows of `slice`. With `attention_probabilities` false
  /// the [B, h, T, T] probabilities are not allocated: such activations serve
  /// block_forward_rows (inference, whose attention keeps no probabilities), not block_forward
  /// or block_backward, which refuse them. `tp` (null: one device) says how many rows are held
  /// between the regions.
  BlockActivations(const Config& config, const TensorParallelSlice& slice, int max_batch,
                   int max_seq_len, MemoryTracker* tracker = nullptr,
                   bool attention_probabilities = true, const TensorParallelism<T>* tp = nullptr);
  /// Bytes held by the buffers.
  std::size_t bytes() const;
};

/// Scratch of a block's passes that lives only during one call (the row-parallel outputs, the
/// backward's intermediate gradients), for up to max_batch × max_seq_len rows of one slice,
/// reported as MemoryCategory::kOther: per row 3C + 2f + w + 3w numbers. One workspace serves
/// every block of a model and every micro-batch, since blocks run one at a time.
template <typename T>
struct BlockWorkspace {
  TrackedBuffer<T> partial;     ///< [N, C] a row-parallel output, before the residual add
  TrackedBuffer<T> d_residual;  ///< [N, C] gradient of r
  TrackedBuffer<T> d_ln;        ///< [N, C] gradient of a LayerNorm's output
  TrackedBuffer<T> d_gelu;      ///< [N, f] gradient of the GELU's output
  TrackedBuffer<T> d_fc;        ///< [N, f] gradient of the MLP pre-activation
  TrackedBuffer<T> d_att_out;   ///< [N, w] gradient of the attention output
  TrackedBuffer<T> d_qkv;       ///< [N, 3w] gradient of q, k, v
  std::size_t max_rows = 0;     ///< rows it has room for

  BlockWorkspace() = default;
  /// Room for `max_batch` × `max_seq_len` rows of `slice`.
  BlockWorkspace(const Config& config, const TensorParallelSlice& slice, int max_batch,
                 int max_seq_len, MemoryTracker* tracker = nullptr);
  /// Bytes held by the buffers.
  std::size_t bytes() const;
};

/// y = block(x) on this rank's `slice`, with weights `w` as the rank stores them (see
/// BlockTensors); x and y are the rows the rank holds ([N, C] on one device); fills `acts`. `tp`
/// is the rank's seam (required when slice.size > 1, its rank and size equal to the slice's;
/// null: one device).
template <typename T>
void block_forward(const Config& config, const TensorParallelSlice& slice, const BlockTensors<T>& w,
                   int batch, int seq_len, const T* x, T* y, BlockActivations<T>& acts,
                   BlockWorkspace<T>& workspace, TensorParallelism<T>* tp = nullptr);

/// The attention of a block as the caller computes it: given qkv [rows, 3w] (each row this
/// slice's queries of all its heads, then keys, then values, as attention_forward reads them),
/// writes att_out [rows, w] (head h in columns [h·head_size, (h+1)·head_size)). block_forward's is
/// causal attention within the micro-batch; an inference engine's attends to K and V it keeps
/// elsewhere (a KV cache), so a row can be one new token of a long sequence.
template <typename T>
using AttentionCore = std::function<void(const T* qkv, T* att_out)>;

/// y [rows, C] = block(x [rows, C]) with the attention computed by `attention`: the same layers
/// as block_forward (LN1, the column-parallel qkv projection, the row-parallel output
/// projection, the residual, LN2, the MLP), on `rows` rows that need not form whole sequences.
/// block_forward is this function with causal attention over its batch × seq_len rows. Fills the
/// activations' per-row buffers (ln1, qkv, att_out, residual, ln2, fc, fc_gelu and the
/// statistics) for the first `rows` rows; `acts` may be made without attention probabilities.
/// The four projections go through the seam `tp` (chapter 4's OneDevice when null): an inference
/// engine that keeps its weights in another format (quantised, say) supplies a OneDevice whose
/// column_forward and row_forward read them. Throws book::Error if `rows` exceeds the activations
/// or the workspace.
template <typename T>
void block_forward_rows(const Config& config, const TensorParallelSlice& slice,
                        const BlockTensors<T>& w, int rows, const T* x, T* y,
                        BlockActivations<T>& acts, BlockWorkspace<T>& workspace,
                        const AttentionCore<T>& attention, TensorParallelism<T>* tp = nullptr);

/// The backward of a block's attention core as the caller computes it: given dout = d att_out
/// [rows, w], the forward's qkv [rows, 3w], its output att_out [rows, w] and what it saved (the
/// activations' `att` buffer), writes (overwrites) dqkv [rows, 3w]. Empty: chapter 4's
/// attention_backward on the probabilities in `att`.
template <typename T>
using AttentionBackwardCore =
    std::function<void(const T* dout, const T* qkv, const T* out, const T* saved, T* dqkv)>;

/// Given dy (the rows the rank holds), writes dx (overwrites) and adds into the gradients `g` of
/// the tensors this rank stores (replicated ones — LayerNorms, b_out, b_proj — get their
/// gradient over the rows the rank holds: the whole one when it holds every row).
/// `attention_backward` replaces chapter 4's attention backward (for a forward whose attention core
/// was not chapter 4's, memory_seams.h); empty by default.
template <typename T>
void block_backward(const Config& config, const TensorParallelSlice& slice,
                    const BlockTensors<T>& w, const BlockTensors<T>& g, int batch, int seq_len,
                    const T* x, const T* dy, T* dx, BlockActivations<T>& acts,
                    BlockWorkspace<T>& workspace, TensorParallelism<T>* tp = nullptr,
                    const AttentionBackwardCore<T>& attention_backward = {});

}  // namespace book::train
