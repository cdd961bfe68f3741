/// @file
/// A tensor-parallel rank of chapter 4's model: chapter 4's train::Model, holding its slice, with
/// this seam (chapter 4's train::TensorParallelism) in its options. The seam is built from this
/// chapter's exercises and operators, so the one block chapter 4 wrote runs Megatron-LM's split:
/// - entering a region (LayerNorm, then a column-parallel linear): f, or with sequence
///   parallelism the gather (sequence_parallel_norm_forward), and their conjugates backward;
/// - the projections: column_parallel_linear_* and row_parallel_linear_* (parallel_linear.h);
///   leaving a region is g's all-reduce, or the scatter's reduce-scatter, inside the row layer;
/// - the embedding and the tied head on this rank's rows of the vocabulary (vocab_parallel.h)
///   and the parallel cross-entropy (parallel_cross_entropy.h);
/// - after the step's backward passes, with sequence parallelism, one all-reduce of the
///   replicated tensors' gradients, which each rank summed over its own tokens only.
/// With sequence parallelism the residual stream between the layers, and so what a pipeline stage
/// sends, is this rank's 1/t of the tokens (chapter 4's Activations size it through the seam).
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "chapters/04_training_baseline/model.h"
#include "chapters/04_training_baseline/tensor_parallelism.h"
#include "chapters/07_tensor_parallel/conjugate.h"
#include "chapters/07_tensor_parallel/tensor_parallel_comm.h"
#include "chapters/07_tensor_parallel/tensor_parallel_group.h"
#include "common/memory.h"

namespace book::tp {

/// The tokens a rank holds between the parallel regions: N, or N/t with sequence parallelism.
/// Throws book::Error when sequence parallelism cannot split N tokens over t ranks evenly.
int held_tokens(int tokens, int ranks, SequenceParallel sequence_parallel);

/// One tensor-parallel rank's seam over its group. It owns the scratch its collectives need, for
/// micro-batches of up to max_batch × context tokens, reported as MemoryCategory::kOther: per
/// token a row-parallel partial sum (C) and, with sequence parallelism, a gathered LayerNorm
/// output and a gathered output gradient (2C) and per held token a LayerNorm output gradient
/// (C); the cross-entropy's (t + 3) numbers per token; with sequence parallelism, at the first
/// finish_gradients, the replicated tensors' gradients (kept for the next steps). One seam serves
/// every model part of a rank that runs one at a time (a pipeline rank's chunks).
template <typename T>
class TensorParallelSeam final : public train::TensorParallelism<T> {
 public:
  /// The seam of `comm`'s rank (null: a group of one) for `config`'s micro-batches of up to
  /// `max_batch` sequences. Allocations report to `tracker` (may be null). Throws book::Error if
  /// max_batch < 1.
  TensorParallelSeam(const train::Config& config, int max_batch, TensorParallelComm<T>* comm,
                     SequenceParallel sequence_parallel, MemoryTracker* tracker = nullptr);

  int rank() const override { return comm_->rank(); }  ///< the group's rank
  int size() const override { return comm_->size(); }  ///< t
  /// held_tokens(rows, t, sequence parallelism).
  int held_rows(int rows) const override;
  /// rows, or rows/t rounded up with sequence parallelism.
  std::size_t held_room(std::size_t rows) const override;
  /// LayerNorm, then f (off) or sequence_parallel_norm_forward (on: the gathered rows).
  const T* norm_forward(const T* x, const T* gain, const T* bias, int rows, int channels, T* out,
                        T* mean, T* rstd) override;
  /// The held rows themselves (off), or gathered once more (on).
  const T* whole_rows(const T* held, int rows, int channels) override;
  /// f's backward, an all-reduce (off); nothing (on: norm_backward's reduce-scatter sums it).
  void complete_input_gradient(T* d_whole, int rows, int channels) override;
  /// LayerNorm's backward (off), or sequence_parallel_norm_backward (on).
  void norm_backward(const T* d_whole, const T* x, const T* gain, const T* mean, const T* rstd,
                     int rows, int channels, T* dx, T* dgain, T* dbias) override;
  /// column_parallel_linear_forward.
  void column_forward(const train::ProjectionWeights<T>& p, const T* x, int rows, T* y) override;
  /// column_parallel_linear_backward (with f's all-reduce when off).
  void column_backward(const train::ProjectionWeights<T>& p, const train::ProjectionGrads<T>& g,
                       const T* x, const T* dy, int rows, T* dx) override;
  /// row_parallel_linear_forward (g's all-reduce, or the scatter's reduce-scatter).
  void row_forward(const train::ProjectionWeights<T>& p, const T* x, int rows, T* y) override;
  /// row_parallel_linear_backward (the scatter's all-gather when on).
  void row_backward(const train::ProjectionWeights<T>& p, const train::ProjectionGrads<T>& g,
                    const T* x, const T* dy, int rows, T* dx) override;
  /// vocab_parallel_embedding_forward.
  void embedding_forward(const int* tokens, int batch, int seq_len, const T* wte, int vocab_begin,
                         int vocab_rows, const T* wpe, int channels, T* out) override;
  /// vocab_parallel_embedding_backward.
  void embedding_backward(const int* tokens, int batch, int seq_len, int vocab_begin,
                          int vocab_rows, const T* d_out, int channels, T* dwte, T* dwpe) override;
  /// parallel_cross_entropy_forward.
  T cross_entropy_forward(const T* logits, const int* targets, int rows, int vocab_begin,
                          int vocab_rows, T* probs) override;
  /// parallel_cross_entropy_backward.
  void cross_entropy_backward(const T* probs, const int* targets, int rows, int vocab_begin,
                              int vocab_rows, T scale, T* dlogits) override;
  /// With sequence parallelism, all-reduces over the group the gradients of the replicated
  /// tensors that each rank computed from its own tokens only (the LayerNorms, the row-parallel
  /// biases b_out and b_proj, the final LayerNorm): one all-reduce of (6L + 2)·C elements for
  /// the whole model. Without, nothing (those gradients are already whole and equal on every
  /// rank).
  void finish_gradients(const train::ParameterLayout& layout, std::span<T> grads) override;

  SequenceParallel sequence_parallel() const { return sequence_parallel_; }  ///< on or off
  TensorParallelComm<T>& comm() { return *comm_; }                           ///< the group
  /// Bytes of the scratch.
  std::size_t bytes() const;

 private:
  bool on() const { return sequence_parallel_ == SequenceParallel::kOn; }

  SequenceParallel sequence_parallel_;
  LocalGroup<T> local_;
  TensorParallelComm<T>* comm_;
  MemoryTracker* tracker_;
  TrackedBuffer<T> whole_, partial_, dy_whole_, d_shard_, cross_entropy_scratch_;
  TrackedBuffer<T> token_sharded_grads_;
};

/// chapter 4's ModelOptions of a tensor-parallel rank: `part` with its vocabulary split over the
/// group (so t must divide the heads and the vocabulary), `seam` in place of OneDevice,
/// allocations reported to `tracker`.
template <typename T>
train::ModelOptions<T> tensor_parallel_options(train::ModelPart part, TensorParallelSeam<T>& seam,
                                               MemoryTracker* tracker = nullptr);

}  // namespace book::tp
