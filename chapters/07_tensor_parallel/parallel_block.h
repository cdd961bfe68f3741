/// @file
/// One transformer block, tensor-parallel and optionally sequence-parallel, composed of this
/// chapter's column- and row-parallel linears and sequence-parallel LayerNorm around chapter 4's
/// attention and GELU (layers.h), on the weights chapter 4's ParameterLayout gives a
/// tensor-parallel rank (BlockTensors: its heads' columns of W_qkv, rows of W_out, its hidden
/// units' columns of W_fc and rows of W_proj; LayerNorms and the row-parallel biases replicated).
///
/// x → r = x + Attn(LN1(x)) → y = r + MLP(LN2(r)), with N = B·S tokens:
/// - sequence parallelism off: x, r, y and the LayerNorms' outputs are whole [N, C] on every rank;
///   f before each column-parallel linear (QKV, MLP up), g after each row-parallel one (attention
///   out, MLP down): 2 all-reduces of N·C elements forward, 2 backward;
/// - on: x, r, y and the LayerNorms are this rank's N/t tokens; the gather (all-gather) after each
///   LayerNorm, the scatter (reduce-scatter) after each row-parallel linear: 2 all-gathers and 2
///   reduce-scatters of N·C forward; backward their conjugates plus one all-gather per LayerNorm
///   to rebuild the whole normalised input the weight gradient needs (only the shard is kept, as
///   in Megatron-LM): 4 all-gathers and 2 reduce-scatters.
#pragma once

#include <cstddef>

#include "chapters/04_training_baseline/config.h"
#include "chapters/04_training_baseline/parameters.h"
#include "chapters/04_training_baseline/partition.h"
#include "chapters/04_training_baseline/tensor_parallel_comm.h"
#include "chapters/07_tensor_parallel/conjugate.h"
#include "common/memory.h"

namespace book::tp {

/// What a block's forward pass keeps for its backward pass, for up to max_batch × max_seq_len
/// tokens, reported as MemoryCategory::kActivations. With w = C/t, f = 4C/t, h = H/t and
/// "held" = the tokens this rank holds between the parallel regions (N, or N/t with sequence
/// parallelism): per held token ln1, residual, ln2 (3C) and the LayerNorms' statistics (4); per
/// token qkv (3w), att_out (w), fc and fc_gelu (2f) — 12C/t in all — and h·S attention
/// probabilities.
template <typename T>
struct ParallelBlockActivations {
  TrackedBuffer<T> ln1;       ///< [held, C] LN1 output (this rank's tokens)
  TrackedBuffer<T> ln1_mean;  ///< [held] LN1 row means
  TrackedBuffer<T> ln1_rstd;  ///< [held] LN1 reciprocal standard deviations
  TrackedBuffer<T> qkv;       ///< [N, 3w] this rank's heads' q, k, v
  TrackedBuffer<T> att;       ///< [B, h, S, S] this rank's heads' softmax probabilities
  TrackedBuffer<T> att_out;   ///< [N, w] attention output before the projection
  TrackedBuffer<T> residual;  ///< [held, C] r = x + attention
  TrackedBuffer<T> ln2;       ///< [held, C] LN2 output
  TrackedBuffer<T> ln2_mean;  ///< [held] LN2 row means
  TrackedBuffer<T> ln2_rstd;  ///< [held] LN2 reciprocal standard deviations
  TrackedBuffer<T> fc;        ///< [N, f] MLP pre-activation, this rank's hidden units
  TrackedBuffer<T> fc_gelu;   ///< [N, f] MLP post-GELU

  ParallelBlockActivations() = default;
  /// Room for max_batch × max_seq_len tokens of `slice` (held: all of them, or 1/t).
  ParallelBlockActivations(const train::Config& config, const train::TensorParallelSlice& slice,
                           SequenceParallel sequence_parallel, int max_batch, int max_seq_len,
                           MemoryTracker* tracker = nullptr);
  /// Bytes held by the buffers.
  std::size_t bytes() const;
};

/// Scratch that lives only during one block's call (MemoryCategory::kOther), shared by every
/// block of a model: per token a row-parallel partial sum and a LayerNorm input gradient (2C),
/// with sequence parallelism also a gathered LayerNorm output and a gathered output gradient (2C
/// more), and the MLP's and attention's intermediate gradients (2f + w + 3w); per held token two
/// more C (a gradient shard, the residual gradient).
template <typename T>
struct ParallelWorkspace {
  TrackedBuffer<T> whole;       ///< [N, C] a gathered (or re-gathered) LayerNorm output (SP)
  TrackedBuffer<T> partial;     ///< [N, C] a row-parallel output before its reduction
  TrackedBuffer<T> dy_whole;    ///< [N, C] a gathered output gradient (SP)
  TrackedBuffer<T> d_ln_whole;  ///< [N, C] a column-parallel linear's input gradient
  TrackedBuffer<T> d_shard;     ///< [held, C] a LayerNorm output gradient, reduce-scattered
  TrackedBuffer<T> d_residual;  ///< [held, C] the gradient of r
  TrackedBuffer<T> d_gelu;      ///< [N, f]
  TrackedBuffer<T> d_fc;        ///< [N, f]
  TrackedBuffer<T> d_att_out;   ///< [N, w]
  TrackedBuffer<T> d_qkv;       ///< [N, 3w]
  std::size_t max_tokens = 0;   ///< N it has room for

  ParallelWorkspace() = default;
  /// Room for max_batch × max_seq_len tokens of `slice`.
  ParallelWorkspace(const train::Config& config, const train::TensorParallelSlice& slice,
                    SequenceParallel sequence_parallel, int max_batch, int max_seq_len,
                    MemoryTracker* tracker = nullptr);
  /// Bytes held by the buffers.
  std::size_t bytes() const;
};

/// The tokens a rank holds between the parallel regions: N, or N/t with sequence parallelism.
/// Throws book::Error when sequence parallelism cannot split N tokens over t ranks evenly.
int held_tokens(int tokens, int ranks, SequenceParallel sequence_parallel);

/// y (this rank's held tokens × C) = block(x) on this rank's `slice` with weights `w` as the rank
/// stores them; fills `acts`. `comm` is the tensor-parallel group (size and rank those of the
/// slice).
template <typename T>
void parallel_block_forward(const train::Config& config, const train::TensorParallelSlice& slice,
                            SequenceParallel sequence_parallel, const train::BlockTensors<T>& w,
                            int batch, int seq_len, const T* x, T* y,
                            ParallelBlockActivations<T>& acts, ParallelWorkspace<T>& workspace,
                            train::TensorParallelComm<T>& comm);

/// Given dy for y (held tokens × C), **writes** dx and **adds** into the gradients `g` of the
/// tensors this rank stores. The replicated LayerNorms and biases get, with sequence parallelism
/// off, the same complete gradient on every rank; with it on, sums over this rank's tokens, to be
/// all-reduced over the group (ParallelModel::finish_gradients).
template <typename T>
void parallel_block_backward(const train::Config& config, const train::TensorParallelSlice& slice,
                             SequenceParallel sequence_parallel, const train::BlockTensors<T>& w,
                             const train::BlockTensors<T>& g, int batch, int seq_len, const T* x,
                             const T* dy, T* dx, ParallelBlockActivations<T>& acts,
                             ParallelWorkspace<T>& workspace, train::TensorParallelComm<T>& comm);

}  // namespace book::tp
