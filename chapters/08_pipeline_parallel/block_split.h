/// @file
/// A block's backward pass in two pieces, for zero-bubble pipeline schedules: B, the
/// gradient of the block's input (what the stage before waits for), and W, the gradients of its
/// four weight matrices and their biases (what nobody needs until the optimizer). B keeps the
/// matrices' output gradients in a WeightGradientInputs; W, run later, multiplies them with the
/// activations the forward pass kept. The LayerNorms' gains and biases get their (cheap)
/// gradients in B. block_backward_input followed by block_backward_weight adds exactly the bits
/// block_backward adds (the same products, each summed in the same order).
#pragma once

#include "chapters/04_training_baseline/block.h"

namespace book::pp {

/// What W needs from B for one block and one micro-batch: the output gradients of W_proj
/// (the block's dy), W_fc, W_out and W_qkv, for up to max_batch × max_seq_len rows of one slice:
/// per row 2C + f + 3w numbers, reported as MemoryCategory::kActivations (they live, like the
/// activations, until W has run).
template <typename T>
struct WeightGradientInputs {
  TrackedBuffer<T> d_out;       ///< [N, C] the block output's gradient (W_proj's output)
  TrackedBuffer<T> d_fc;        ///< [N, f] the MLP pre-activation's gradient (W_fc's output)
  TrackedBuffer<T> d_residual;  ///< [N, C] r's gradient (W_out's output)
  TrackedBuffer<T> d_qkv;       ///< [N, 3w] q, k, v's gradient (W_qkv's output)
  std::size_t max_rows = 0;     ///< rows it has room for

  WeightGradientInputs() = default;
  /// Room for `max_batch` × `max_seq_len` rows of `slice`.
  WeightGradientInputs(const train::Config& config, const train::TensorParallelSlice& slice,
                       int max_batch, int max_seq_len, MemoryTracker* tracker = nullptr);
};

/// B: as block_backward, but adds into `g` only the LayerNorms' gain and bias gradients; writes
/// dx and keeps in `keep` what block_backward_weight needs. Same arguments as block_backward, on
/// one device: throws book::Error for a tensor-parallel slice.
template <typename T>
void block_backward_input(const train::Config& config, const train::TensorParallelSlice& slice,
                          const train::BlockTensors<T>& w, const train::BlockTensors<T>& g,
                          int batch, int seq_len, const T* x, const T* dy, T* dx,
                          train::BlockActivations<T>& a, train::BlockWorkspace<T>& ws,
                          WeightGradientInputs<T>& keep);

/// W: adds the gradients of W_proj, W_fc, W_out, W_qkv and their biases into `g`, from `keep`
/// (filled by block_backward_input for the same micro-batch) and the forward's activations `a`.
/// Needs no communication.
template <typename T>
void block_backward_weight(const train::Config& config, const train::TensorParallelSlice& slice,
                           const train::BlockTensors<T>& w, const train::BlockTensors<T>& g,
                           int batch, int seq_len, const train::BlockActivations<T>& a,
                           const WeightGradientInputs<T>& keep);

}  // namespace book::pp
