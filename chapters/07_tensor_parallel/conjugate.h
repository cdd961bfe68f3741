/// @file
/// The communication of tensor parallelism as four named operators (Shoeybi et al.,
/// "Megatron-LM", 2019, §3, and Korthikanti et al., "Reducing Activation Recomputation in Large
/// Transformer Models", 2022, §4.2.2). Each is a pair of a forward and a backward function that
/// are conjugate: the backward of a copy is a sum, the backward of a sum is a copy.
///
/// | operator | forward | backward | where (tensor parallel) | where (+ sequence parallel) |
/// |---|---|---|---|---|
/// | f | identity | all-reduce | before a column-parallel linear | — |
/// | g | all-reduce | identity | after a row-parallel linear | — |
/// | gather | all-gather | reduce-scatter | — | before a column-parallel linear |
/// | scatter | reduce-scatter | all-gather | — | after a row-parallel linear |
///
/// An all-reduce is a reduce-scatter followed by an all-gather (that is how the ring runs it), so
/// sequence parallelism's pairs move the same bytes as tensor parallelism's all-reduces; what it
/// changes is that the tensors between a scatter and the next gather — the LayerNorms, the
/// residual adds, dropout — are held as 1/t of the tokens on each rank instead of all of them.
/// (Megatron-LM's names: copy_to / reduce_from_tensor_model_parallel_region, and
/// gather_from / reduce_scatter_to_sequence_parallel_region.)
#pragma once

#include <span>

#include "chapters/07_tensor_parallel/tensor_parallel_comm.h"

namespace book::tp {

/// How the tokens between the tensor-parallel regions are held.
enum class SequenceParallel {
  kOff,  ///< every rank holds every token (Megatron-LM 2019: f and g)
  kOn,   ///< each rank holds 1/t of the tokens (Korthikanti et al. 2022: gather and scatter)
};

/// "off" or "on".
const char* sequence_parallel_name(SequenceParallel sequence_parallel);

/// f, forward: the identity. Every rank already holds the whole input `x` of the column-parallel
/// linear that follows; nothing moves (present so the code reads like the paper's figure).
template <typename T>
void f_forward(std::span<const T> x, TensorParallelComm<T>& comm);
/// f, backward: all-reduce of the input gradient. Each rank's column-parallel linear produced
/// the part of dL/dx that flows through its columns; the whole gradient is their sum.
template <typename T>
void f_backward(std::span<T> dx, TensorParallelComm<T>& comm);

/// g, forward: all-reduce. A row-parallel linear's output on each rank is a partial sum over
/// its rows; the layer's output is their sum, on every rank.
template <typename T>
void g_forward(std::span<T> y, TensorParallelComm<T>& comm);
/// g, backward: the identity. Every rank already holds the whole output gradient `dy`, which is
/// what each partial sum's gradient is.
template <typename T>
void g_backward(std::span<const T> dy, TensorParallelComm<T>& comm);

/// gather, forward: all-gather along the tokens. `shard` is this rank's 1/t of the rows (rank
/// order), `whole` receives every rank's, t · shard.size() elements.
template <typename T>
void gather_forward(std::span<const T> shard, std::span<T> whole, TensorParallelComm<T>& comm);
/// gather, backward: reduce-scatter. `d_whole` is this rank's partial gradient of all the rows
/// (from its columns); `d_shard` receives the sum over ranks of its own rows.
template <typename T>
void gather_backward(std::span<const T> d_whole, std::span<T> d_shard, TensorParallelComm<T>& comm);

/// scatter, forward: reduce-scatter. `partial` holds this rank's partial sum over all the rows
/// (a row-parallel linear's output); `shard` receives the sum over ranks of its own rows.
template <typename T>
void scatter_forward(std::span<const T> partial, std::span<T> shard, TensorParallelComm<T>& comm);
/// scatter, backward: all-gather of the shards' gradients, so each rank has the gradient of
/// every row of its partial sum.
template <typename T>
void scatter_backward(std::span<const T> d_shard, std::span<T> d_whole,
                      TensorParallelComm<T>& comm);

}  // namespace book::tp
