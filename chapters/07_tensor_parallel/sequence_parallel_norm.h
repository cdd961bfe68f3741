/// @file
/// Sequence parallelism's entry into a tensor-parallel region (Korthikanti et al., "Reducing
/// Activation Recomputation in Large Transformer Models", 2022, §4.2.2): LayerNorm works on each
/// token alone, so each rank normalises only its 1/t of the tokens, and an all-gather assembles
/// the whole normalised input that the column-parallel linears after it need. Its backward pass is
/// the conjugate: a reduce-scatter of the linears' partial input gradients, then LayerNorm's
/// backward on this rank's tokens. Chapter 4's layernorm_forward and layernorm_backward do the
/// arithmetic.
#pragma once

#include "chapters/07_tensor_parallel/tensor_parallel_comm.h"

namespace book::tp {

/// Exercise tp.sequence_parallel_norm (forward): LayerNorm of this rank's tokens x_shard
/// [rows_per_rank, C] with the replicated `gain` and `bias` into ln_shard (what the backward pass
/// keeps), with each row's mean and rstd; then the gather (gather_forward: all-gather) writes
/// every rank's ln_shard, in rank order, into whole [t · rows_per_rank, C].
/// \exercise{tp.sequence_parallel_norm}
template <typename T>
void sequence_parallel_norm_forward(const T* x_shard, const T* gain, const T* bias,
                                    int rows_per_rank, int channels, T* ln_shard, T* mean, T* rstd,
                                    T* whole, TensorParallelComm<T>& comm);

/// Exercise tp.sequence_parallel_norm (backward): d_whole [t · rows_per_rank, C] is this rank's
/// partial gradient of the forward's `whole` (its column-parallel linears' dx). The gather's
/// backward (gather_backward: reduce-scatter) sums it over ranks into d_shard [rows_per_rank, C]
/// (the caller's scratch, overwritten), then LayerNorm's backward on this rank's tokens **adds**
/// into dx_shard [rows_per_rank, C], dgain and dbias [C] — the last two summed over this rank's
/// tokens only: partial sums the caller all-reduces with the other token-sharded gradients.
/// \exercise{tp.sequence_parallel_norm}
template <typename T>
void sequence_parallel_norm_backward(const T* d_whole, const T* x_shard, const T* gain,
                                     const T* mean, const T* rstd, int rows_per_rank, int channels,
                                     T* d_shard, T* dx_shard, T* dgain, T* dbias,
                                     TensorParallelComm<T>& comm);

}  // namespace book::tp
