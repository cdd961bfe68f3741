/// @file
/// One transformer block, forward and backward, on a slice of its heads and of its MLP hidden
/// dimension, so that chapter 7 can run it tensor-parallel (Megatron-LM's column/row split).
///
/// x → r = x + Attn(LN1(x)) → y = r + MLP(LN2(r)). With the heads [h0, h1) and hidden units
/// [f0, f1) of a shard, the attention and MLP outputs are partial sums over shards; `reduce` is
/// called on them (an all-reduce across the tensor-parallel group; nothing on one device) before
/// the residual add, and on the gradients of LN1/LN2's outputs in the backward pass.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "chapters/04_training_baseline/config.h"
#include "chapters/04_training_baseline/parameters.h"

namespace book::train {

/// The heads and MLP hidden units one tensor-parallel rank owns. The default is the whole block.
struct Shard {
  int head_begin = 0;    ///< first head
  int head_end = -1;     ///< one past the last head (-1: n_head)
  int hidden_begin = 0;  ///< first MLP hidden unit
  int hidden_end = -1;   ///< one past the last hidden unit (-1: d_ff)

  /// A copy with the -1s replaced by the config's sizes, checked against it.
  Shard resolved(const Config& config) const;
};

/// Sums a partial result over the tensor-parallel group, in place. Empty: one device.
template <typename T>
using AllReduce = std::function<void(T* data, std::size_t count)>;

/// What a block's forward pass keeps for its backward pass, for B·T rows and one shard.
template <typename T>
struct BlockActivations {
  std::vector<T> ln1;       ///< [N, C] LN1 output
  std::vector<T> ln1_mean;  ///< [N] LN1 row means
  std::vector<T> ln1_rstd;  ///< [N] LN1 reciprocal standard deviations
  std::vector<T> qkv;       ///< [N, 3·heads·hs] this shard's q, k, v
  std::vector<T> att;       ///< [B, heads, T, T] softmax probabilities
  std::vector<T> att_out;   ///< [N, heads·hs] attention output before projection
  std::vector<T> residual;  ///< [N, C] r = x + attention
  std::vector<T> ln2;       ///< [N, C] LN2 output
  std::vector<T> ln2_mean;  ///< [N] LN2 row means
  std::vector<T> ln2_rstd;  ///< [N] LN2 reciprocal standard deviations
  std::vector<T> fc;        ///< [N, hidden] MLP pre-activation
  std::vector<T> fc_gelu;   ///< [N, hidden] MLP post-GELU

  /// Sizes every buffer for `batch` × `seq_len` rows of `shard`.
  void resize(const Config& config, const Shard& shard, int batch, int seq_len);
  /// Bytes held by the buffers.
  std::size_t bytes() const;
};

/// y [N, C] = block(x [N, C]) on `shard`; fills `acts` (resized by the caller).
template <typename T>
void block_forward(const Config& config, const BlockTensors<T>& w, const Shard& shard, int batch,
                   int seq_len, const T* x, T* y, BlockActivations<T>& acts,
                   const AllReduce<T>& reduce = {});

/// Given dy [N, C], writes dx [N, C] (overwrites) and adds into the shard's parameter gradients
/// `g` (LayerNorm gradients are replicated: every shard adds the same full values).
template <typename T>
void block_backward(const Config& config, const BlockTensors<T>& w, const BlockTensors<T>& g,
                    const Shard& shard, int batch, int seq_len, const T* x, const T* dy, T* dx,
                    BlockActivations<T>& acts, const AllReduce<T>& reduce = {});

}  // namespace book::train
