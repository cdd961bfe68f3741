/// @file
/// Megatron-LM's two ways to split a linear layer y = x·W + b over t ranks (Shoeybi et al.,
/// "Megatron-LM", 2019, §3): by the columns of W, so each rank computes its columns of y from the
/// whole x, and by the rows of W, so each rank multiplies its columns of x and the t partial
/// products are summed. A column-parallel layer followed by a row-parallel one (QKV then the
/// attention's output projection; the MLP's up then down projection) needs no communication in
/// between: the column layer's output split is exactly the row layer's input split. The two
/// exercises here are those layers with their operators: f or the gather before a column layer,
/// g or the scatter after a row layer (conjugate.h).
#pragma once

#include "chapters/07_tensor_parallel/conjugate.h"
#include "chapters/07_tensor_parallel/tensor_parallel_comm.h"

namespace book::tp {

/// One rank's shard of a linear layer y = x·W + b, as it stores it (row-major, W is [in, out]).
template <typename T>
struct LinearShard {
  const T* w = nullptr;     ///< [in, out]: this rank's columns (column-parallel) or rows (row-)
  const T* bias = nullptr;  ///< [out], or null: its columns' biases / the whole, replicated, bias
  int in = 0;   ///< input features it multiplies: all of them (column), its 1/t (row-parallel)
  int out = 0;  ///< output features it produces: its 1/t (column), all of them (row-parallel)
};

/// Where a backward pass adds the gradients of a LinearShard (same shapes; bias null when the
/// shard has none).
template <typename T>
struct LinearShardGrad {
  T* w = nullptr;     ///< [in, out]
  T* bias = nullptr;  ///< [out], or null
};

/// Exercise tp.column_parallel_linear (forward): y [rows, out] = x [rows, in] · W + b with this
/// rank's columns of W and b, so y is this rank's columns of the layer's output. `x` is the whole
/// input on every rank — there already (f's forward is the identity) or just all-gathered
/// (sequence parallelism) — so nothing moves.
/// \exercise{tp.column_parallel_linear}
template <typename T>
void column_parallel_linear_forward(const LinearShard<T>& shard, const T* x, int rows, T* y);

/// Exercise tp.column_parallel_linear (backward), given dy [rows, out], the gradient of this
/// rank's output columns: adds dW += xᵀ·dy and db += Σ_rows dy (this rank's columns, complete
/// without communication) and **writes** dx [rows, in] = dy · Wᵀ, the part of the input gradient
/// that flows through this rank's columns. With sequence parallelism off it then applies f's
/// backward (f_backward: all-reduce), so every rank ends with the whole input gradient. With it
/// on, dx stays this rank's partial sum: the gather's backward (a reduce-scatter, in
/// sequence_parallel_norm_backward) completes it.
/// \exercise{tp.column_parallel_linear}
template <typename T>
void column_parallel_linear_backward(const LinearShard<T>& shard, const LinearShardGrad<T>& grad,
                                     const T* x, const T* dy, int rows, T* dx,
                                     TensorParallelComm<T>& comm,
                                     SequenceParallel sequence_parallel);

/// Exercise tp.row_parallel_linear (forward): x [rows, in] is this rank's columns of the
/// previous (column-parallel) layer's output and W this rank's rows, so partial [rows, out] =
/// x · W is this rank's share of a sum over ranks (`partial` is the caller's scratch). With
/// sequence parallelism off, g's forward (g_forward: all-reduce) completes it and every rank gets
/// y [rows, out] = Σ_ranks partial + b; with it on, the scatter's forward (scatter_forward:
/// reduce-scatter) gives this rank its 1/t of the rows, y [rows/t, out] = (Σ partial)[its rows] +
/// b. The bias is replicated and added after the reduction, so it counts once.
/// \exercise{tp.row_parallel_linear}
template <typename T>
void row_parallel_linear_forward(const LinearShard<T>& shard, const T* x, int rows, T* partial,
                                 T* y, TensorParallelComm<T>& comm,
                                 SequenceParallel sequence_parallel);

/// Exercise tp.row_parallel_linear (backward), given dy, the gradient of the forward's y: [rows,
/// out] with sequence parallelism off (the same on every rank: g's backward is the identity),
/// [rows/t, out] with it on, when the scatter's backward (scatter_backward: all-gather) first
/// collects every rank's rows into `dy_whole` [rows, out] (the caller's scratch; unused when off).
/// Then **writes** dx [rows, in] = dy·Wᵀ (this rank's input columns, complete) and adds
/// dW += xᵀ·dy and db += Σ dy over the rows of dy this rank was given: all of them when off (every
/// rank gets the same), its own 1/t when on (a partial sum over tokens, which the caller
/// all-reduces with the other token-sharded gradients).
/// \exercise{tp.row_parallel_linear}
template <typename T>
void row_parallel_linear_backward(const LinearShard<T>& shard, const LinearShardGrad<T>& grad,
                                  const T* x, const T* dy, int rows, T* dy_whole, T* dx,
                                  TensorParallelComm<T>& comm, SequenceParallel sequence_parallel);

}  // namespace book::tp
