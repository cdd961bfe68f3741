/// @file
/// The activations of one micro-batch: everything a model part's forward pass keeps for its
/// backward pass, and the gradient of the residual stream. A model runs any number of these, so
/// several micro-batches can be in flight at once (a pipeline schedule keeps several):
/// forward A, forward B, backward B, backward A gives the gradients of A then B.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "chapters/04_training_baseline/block.h"
#include "chapters/04_training_baseline/memory_seams.h"
#include "common/memory.h"

namespace book::train {

template <typename T>
class Model;

/// One micro-batch's activations for one Model (the whole model, a pipeline stage, a
/// tensor-parallel rank), sized when constructed for the model's max_batch × context rows and
/// reported to the model's tracker as MemoryCategory::kActivations. Per row (token), with L the
/// part's blocks, C = d_model, V = the vocabulary rows the slice holds, T = context and w, f, h
/// a block's tensor-parallel widths (block.h); "per held row" is per row on one device, and per
/// row the model's seam holds between the regions (tensor_parallelism.h) otherwise:
/// - the token ids (first part) and the targets (last part): one int each;
/// - the residual stream at the part's L + 1 layer boundaries, and its gradient: 2(L + 1)·C per
///   held row;
/// - each block's BlockActivations: 3C + 4 per held row, 4w + 2f + h·T per row;
/// - the head (last part): the final LayerNorm's output and statistics C + 2 per held row,
///   logits and probabilities 2V.
///
/// The blocks' part is what the model's activation policy keeps (its BlockMemory,
/// memory_seams.h); the above is the default, which keeps everything. An attention kernel's
/// saved numbers replace the h·T probabilities per row.
template <typename T>
class Activations {
 public:
  /// Room for one micro-batch of `model`.
  explicit Activations(const Model<T>& model);
  Activations(const Activations&) = delete;             ///< One micro-batch, one owner.
  Activations& operator=(const Activations&) = delete;  ///< One micro-batch, one owner.

  /// Sets the micro-batch's shape (checked against the model's max_batch and context).
  /// embed_forward() calls it; a pipeline stage that starts mid-model calls it before writing
  /// the activations it received into residual(first layer).
  void set_shape(int batch, int seq_len);
  int batch() const { return batch_; }      ///< sequences in the micro-batch (0: no shape yet)
  int seq_len() const { return seq_len_; }  ///< positions per sequence
  /// Rows of the residual stream held (batch · seq_len on one device; the seam's share else).
  int held_rows() const { return held_rows_; }

  /// The input of layer `layer` ([held rows, C]; layer = n_layer: the head's input), for the part's
  /// layers first..last. A stage receives residual(first) and sends residual(last).
  T* residual(int layer);
  /// The gradient of the loss with respect to residual(layer). A stage receives
  /// residual_grad(last) and sends residual_grad(first).
  T* residual_grad(int layer);
  /// What block `layer` (one of the part's blocks, first..last−1) kept in the forward pass: for
  /// code that runs a block's backward in pieces. Throws book::Error when the model's activation
  /// policy does not keep that block's activations whole (BlockMemory::kept).
  BlockActivations<T>& block(int layer);
  /// Logits of the last head_forward, [B·T, V] (last part only; V: the slice's vocabulary rows).
  const T* logits() const;
  /// Bytes layer `layer` keeps for its backward pass: its block's activations and its input.
  /// Throws book::Error when the activation policy does not keep that block's activations whole.
  std::size_t layer_bytes(int layer) const;
  /// Bytes of every buffer (the formula above at max_batch × context).
  std::size_t bytes() const;

 private:
  friend class Model<T>;
  std::size_t index(int layer, const char* who) const;

  const Model<T>* owner_;
  int first_layer_, last_layer_, max_batch_, context_;
  int batch_ = 0, seq_len_ = 0, held_rows_ = 0;
  bool has_targets_ = false;
  TrackedBuffer<int> tokens_, targets_;
  std::vector<TrackedBuffer<T>> stream_, stream_grad_;
  std::unique_ptr<BlockMemory<T>> blocks_;  // what the activation policy keeps of the blocks
  TrackedBuffer<T> lnf_, lnf_mean_, lnf_rstd_, logits_, probs_;
};

}  // namespace book::train
