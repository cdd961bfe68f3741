/// @file
/// The collectives a tensor-parallel group needs, as a small interface the exercises are written
/// against: TensorParallelGroup (tensor_parallel_group.h) implements it with chapter 3's
/// Communicator (threads, MPI or NCCL) and counts what each call moves.
///
/// Without sequence parallelism a block needs only all_reduce: twice in its forward pass (after
/// the attention and MLP output projections) and twice in its backward pass (the gradients of the
/// two LayerNorm outputs), each of batch · seq_len · d_model elements. Sequence parallelism
/// replaces each all-reduce with a reduce-scatter and an all-gather along the sequence, so the
/// interface has those too.
#pragma once

#include <cstddef>

namespace book::tp {

/// One rank's handle on its tensor-parallel group. Every rank of the group calls each collective
/// in the same order with the same counts. T is float (training) or double (tests).
template <typename T>
class TensorParallelComm {
 public:
  virtual ~TensorParallelComm() = default;

  /// This rank's index in the group, 0..size()-1.
  virtual int rank() const = 0;
  /// Ranks in the group, t.
  virtual int size() const = 0;
  /// data[i] = Σ over ranks of data[i], in place, for i < count; every rank gets the same bits.
  virtual void all_reduce(T* data, std::size_t count) = 0;
  /// out[i] = Σ over ranks r of in_r[rank() · count_per_rank + i], for i < count_per_rank: `in`
  /// holds size() · count_per_rank elements, this rank keeps the sum of its block.
  virtual void reduce_scatter(const T* in, T* out, std::size_t count_per_rank) = 0;
  /// out[r · count_per_rank + i] = in_r[i]: every rank gets every rank's block, in rank order.
  virtual void all_gather(const T* in, T* out, std::size_t count_per_rank) = 0;
};

}  // namespace book::tp
