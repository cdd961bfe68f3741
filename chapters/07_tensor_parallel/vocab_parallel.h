/// @file
/// The vocabulary-parallel embedding and LM head (Megatron-LM's VocabParallelEmbedding and its
/// parallel output layer). The token embedding wte [V, C] is also the LM head (tied, as in
/// GPT-2); split by rows, rank r holds tokens [r·V/t, (r+1)·V/t) — chapter 4's ParameterLayout
/// with TensorParallelSlice::split_vocabulary. The same shard serves both uses, so the tie costs
/// no communication:
/// - embedding: each rank looks up the tokens in its range (zeros for the others) and the sum over
///   ranks — g's all-reduce, or the scatter's reduce-scatter with sequence parallelism — gives
///   every token its row; the position embedding is replicated and added once, by rank 0;
/// - head: a column-parallel linear whose weight is the shard transposed: logits [N, V/t] =
///   LN_f(x) · wte_shardᵀ, this rank's vocabulary columns, which the parallel cross-entropy
///   consumes without gathering (parallel_cross_entropy.h).
#pragma once

#include "chapters/07_tensor_parallel/conjugate.h"
#include "chapters/07_tensor_parallel/tensor_parallel_comm.h"

namespace book::tp {

/// This rank's rows of the token embedding: ids [begin, begin + rows).
template <typename T>
struct VocabularyShard {
  const T* wte = nullptr;  ///< [rows, C]
  int begin = 0;           ///< the first token id held
  int rows = 0;            ///< V / t
};

/// out (held tokens × C) = wte[tokens] + wpe[positions] for the B × S tokens: `partial` [B·S, C]
/// (scratch) gets this rank's share — its tokens' rows, and wpe on rank 0 — and g's all-reduce
/// (off) or the scatter's reduce-scatter (on, this rank's B·S/t tokens) sums it. Throws
/// book::Error, before communicating, for an id outside 0 … t · shard.rows − 1.
template <typename T>
void vocab_parallel_embedding_forward(const int* tokens, int batch, int seq_len,
                                      const VocabularyShard<T>& shard, const T* wpe, int channels,
                                      T* partial, T* out, TensorParallelComm<T>& comm,
                                      SequenceParallel sequence_parallel);

/// Adds the gradients of the last forward's out, d_out (held tokens × C), into dwte (this rank's
/// rows: its tokens only) and dwpe (every position; every rank the same). With sequence
/// parallelism the scatter's backward first all-gathers d_out into d_whole [B·S, C] (scratch).
template <typename T>
void vocab_parallel_embedding_backward(const int* tokens, int batch, int seq_len,
                                       const VocabularyShard<T>& shard, const T* d_out,
                                       int channels, T* d_whole, T* dwte, T* dwpe,
                                       TensorParallelComm<T>& comm,
                                       SequenceParallel sequence_parallel);

}  // namespace book::tp
