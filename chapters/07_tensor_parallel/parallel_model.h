/// @file
/// The GPT of chapter 4, tensor-parallel end to end: the vocabulary-parallel embedding, every
/// block column/row-parallel (parallel_block.h), the final LayerNorm, the vocabulary-parallel
/// head and the parallel cross-entropy — with sequence parallelism optional. Each rank holds only
/// its shard: chapter 4's ParameterLayout of a ModelPart whose slice splits the heads, the MLP's
/// hidden units and the vocabulary over the t ranks. A part may also be a range of layers (a
/// pipeline stage), so chapter 8 composes these ranks with pipeline and data parallelism.
///
/// The passes come in the pieces chapter 4's Model has (embed_forward, layers_forward,
/// head_forward, head_backward, layers_backward, embed_backward), on one ParallelActivations per
/// micro-batch in flight. With sequence parallelism the residual stream between layers, and so
/// what a pipeline stage sends, is this rank's 1/t of the tokens.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "chapters/04_training_baseline/config.h"
#include "chapters/04_training_baseline/data.h"
#include "chapters/04_training_baseline/parameters.h"
#include "chapters/04_training_baseline/partition.h"
#include "chapters/04_training_baseline/tensor_parallel_comm.h"
#include "chapters/07_tensor_parallel/conjugate.h"
#include "chapters/07_tensor_parallel/parallel_block.h"
#include "chapters/07_tensor_parallel/tensor_parallel_group.h"
#include "common/memory.h"

namespace book::tp {

template <typename T>
class ParallelModel;

/// One micro-batch's activations on one rank of a ParallelModel, sized for its max_batch ×
/// context tokens and reported to its tracker as MemoryCategory::kActivations. With "held" the
/// tokens this rank holds (N, or N/t with sequence parallelism): the token ids (first part) and
/// targets (last part), the residual stream at the part's L + 1 layer boundaries and its gradient
/// (2(L + 1) · held · C), each block's ParallelBlockActivations, and the head's LayerNorm output
/// and statistics (held · (C + 2)) with this rank's columns of the logits and probabilities
/// (2 · N · V/t).
template <typename T>
class ParallelActivations {
 public:
  /// Room for one micro-batch of `model`.
  explicit ParallelActivations(const ParallelModel<T>& model);
  ParallelActivations(const ParallelActivations&) = delete;             ///< One owner.
  ParallelActivations& operator=(const ParallelActivations&) = delete;  ///< One owner.

  /// Sets the micro-batch's shape: checked against max_batch and the context, and, with sequence
  /// parallelism, that t divides batch · seq_len.
  void set_shape(int batch, int seq_len);
  int batch() const { return batch_; }      ///< sequences (0: no shape yet)
  int seq_len() const { return seq_len_; }  ///< positions per sequence
  int held() const { return held_; }        ///< tokens this rank holds between the regions

  /// The input of layer `layer` (held × C; layer = n_layer: the head's input).
  T* residual(int layer);
  /// The gradient of the loss with respect to residual(layer).
  T* residual_grad(int layer);
  /// This rank's vocabulary columns of the last head_forward's logits, [B·S, V/t].
  const T* logits() const;
  /// Bytes layer `layer` keeps for its backward pass: its block's activations and its input.
  std::size_t layer_bytes(int layer) const;
  /// Bytes of every buffer.
  std::size_t bytes() const;

 private:
  friend class ParallelModel<T>;
  std::size_t index(int layer, const char* who) const;

  const ParallelModel<T>* owner_;
  int first_layer_, last_layer_, max_batch_, context_;
  int batch_ = 0, seq_len_ = 0, held_ = 0;
  bool has_targets_ = false;
  TrackedBuffer<int> tokens_, targets_;
  std::vector<TrackedBuffer<T>> stream_, stream_grad_;
  std::vector<ParallelBlockActivations<T>> blocks_;
  TrackedBuffer<T> lnf_, lnf_mean_, lnf_rstd_, logits_, probs_;
};

/// How a ParallelModel is built besides its shape.
template <typename T>
struct ParallelModelOptions {
  /// Layers [first, last) and the slice {rank, t}. The vocabulary is always split: the model sets
  /// split_vocabulary, so t must divide the heads and the vocabulary.
  train::ModelPart part;
  /// Whether the tokens between the parallel regions are split over the ranks too.
  SequenceParallel sequence_parallel = SequenceParallel::kOff;
  /// The tensor-parallel group (size t, rank the slice's); required when t > 1. Not owned.
  train::TensorParallelComm<T>* comm = nullptr;
  /// Receives the allocations (null: none reported). Not owned.
  MemoryTracker* tracker = nullptr;
};

/// One tensor-parallel rank of the GPT (or of a range of its layers). Allocates, at
/// construction: parameters and gradients (layout().total() each, kParameters and kGradients),
/// a ParallelWorkspace and the head's scratch (kOther). T is float or double.
template <typename T>
class ParallelModel {
 public:
  /// This rank's part of `config`, for micro-batches of up to max_batch sequences of up to
  /// config.context tokens; parameters uninitialised, gradients zero. Throws book::Error if t
  /// does not divide the heads or the vocabulary, or the group does not match the slice.
  ParallelModel(const train::Config& config, int max_batch,
                const ParallelModelOptions<T>& options = {});
  ParallelModel(const ParallelModel&) = delete;             ///< Views point into the buffers.
  ParallelModel& operator=(const ParallelModel&) = delete;  ///< Views point into the buffers.
  ~ParallelModel();

  /// Chapter 4's initialisation from `seed`: exactly this rank's share of the one-device model's.
  void init(std::uint64_t seed);

  /// Full forward (a part with the embeddings and the head): the mean loss against targets
  /// (-1 = ignored), the same on every rank; with targets null only the logits, and 0.
  T forward(ParallelActivations<T>& acts, const int* tokens, const int* targets, int batch,
            int seq_len);
  /// Full backward after forward(acts, ...): adds dLoss/dθ · loss_scale into grads(). With
  /// sequence parallelism call finish_gradients() once after the step's last backward.
  void backward(ParallelActivations<T>& acts, T loss_scale = T(1));
  /// With sequence parallelism, all-reduces over the group the gradients of the replicated
  /// tensors that each rank computed from its own tokens only (the LayerNorms, the row-parallel
  /// biases b_out and b_proj, the final LayerNorm): one all-reduce of (6L + 2)·C elements for the
  /// whole model. Without, nothing (those gradients are already whole and equal on every rank).
  void finish_gradients();

  /// Pipeline pieces, in order: embed_forward (first part), layers_forward, head_forward (last).
  void embed_forward(ParallelActivations<T>& acts, const int* tokens, int batch, int seq_len);
  /// Runs layers [first, last) of this part: reads residual(first), writes residual(last).
  void layers_forward(ParallelActivations<T>& acts, int first, int last);
  /// Final LayerNorm, this rank's logits, the parallel cross-entropy (see forward()).
  T head_forward(ParallelActivations<T>& acts, const int* targets);
  /// Backward pieces, in order: head_backward, layers_backward, embed_backward.
  void head_backward(ParallelActivations<T>& acts, T loss_scale);
  /// Reads residual_grad(last), writes residual_grad(first), adds the layers' gradients.
  void layers_backward(ParallelActivations<T>& acts, int last, int first);
  /// Adds the embeddings' gradients from residual_grad(0).
  void embed_backward(ParallelActivations<T>& acts);

  /// Sets every gradient to zero.
  void zero_grad();
  /// Σ g² over this rank's gradients with every replicated tensor counted on rank 0 only, in
  /// double: the sum over the group is the whole model's Σ g², for a global-norm clip.
  double gradient_sum_of_squares() const;

  const train::Config& config() const { return config_; }           ///< The shape.
  const train::ModelPart& part() const { return layout_.part(); }   ///< The part (resolved).
  const train::ParameterLayout& layout() const { return layout_; }  ///< Where tensors live.
  SequenceParallel sequence_parallel() const { return sequence_parallel_; }  ///< SP on or off.
  int max_batch() const { return max_batch_; }                ///< Sequences per batch.
  MemoryTracker* tracker() const { return tracker_; }         ///< Where allocations go.
  train::TensorParallelComm<T>& comm() { return *comm_; }     ///< The group.
  TrackedBuffer<T>& params() { return params_; }              ///< Flat parameters.
  const TrackedBuffer<T>& params() const { return params_; }  ///< Flat parameters.
  TrackedBuffer<T>& grads() { return grads_; }                ///< Flat gradients.
  const TrackedBuffer<T>& grads() const { return grads_; }    ///< Flat gradients.
  /// Bytes of the workspace and the head's scratch.
  std::size_t workspace_bytes() const;

 private:
  void check(const ParallelActivations<T>& acts, const char* who, bool needs_shape = true) const;
  train::TensorParallelSlice slice() const { return layout_.part().tensor_parallel; }

  train::Config config_;
  int max_batch_;
  SequenceParallel sequence_parallel_;
  train::ParameterLayout layout_;
  LocalGroup<T> local_;
  train::TensorParallelComm<T>* comm_;
  MemoryTracker* tracker_;
  TrackedBuffer<T> params_, grads_;
  train::ModelTensors<T> p_, g_;
  ParallelWorkspace<T> workspace_;
  TrackedBuffer<T> dlogits_, cross_entropy_scratch_, token_sharded_grads_;
  std::vector<const train::TensorSlot*> token_sharded_;  // replicated slots summed by finish
};

/// Forward and backward of one micro-batch through a part with every layer: returns its mean
/// loss and adds dLoss/dθ · loss_scale into the gradients (call model.zero_grad() first, and
/// model.finish_gradients() after the step's last micro-batch).
template <typename T>
T forward_backward(ParallelModel<T>& model, const train::Batch& batch, T loss_scale,
                   ParallelActivations<T>& acts);

}  // namespace book::tp
