/// @file
/// The GPT: embeddings, blocks, final LayerNorm, tied LM head, cross-entropy loss.
///
/// The forward and backward passes are split at the residual stream so a pipeline stage
/// (chapter 8) can run a range of layers: residual(l) is the input of layer l and residual(L) the
/// input of the head; residual_grad(l) holds the gradient of the loss with respect to it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "chapters/04_training_baseline/block.h"
#include "chapters/04_training_baseline/config.h"
#include "chapters/04_training_baseline/parameters.h"
#include "common/buffer.h"

namespace book::train {

/// Called during the backward pass each time the gradients of flat elements [begin, end) are
/// final for this micro-batch: first the final LayerNorm, then block L-1, ..., block 0, then the
/// embeddings (the tied wte is final only after the embedding's backward, since the LM head also
/// adds into it). The ranges tile the flat buffer. Chapter 5 starts a bucket's all-reduce from
/// it while the backward pass goes on; chapter 6 reduce-scatters from it. Empty: no call.
using GradientReadyHook = std::function<void(std::size_t begin, std::size_t end)>;

/// The model, its flat parameter and gradient buffers, and its activations for up to
/// max_batch × config.context tokens. T is float for training, double for the tests.
template <typename T>
class Model {
 public:
  /// A model of `config` whose activations fit `max_batch` sequences; parameters uninitialised.
  Model(const Config& config, int max_batch);
  Model(const Model&) = delete;             ///< Views point into the buffers: no copies.
  Model& operator=(const Model&) = delete;  ///< Views point into the buffers: no copies.

  /// GPT-2's initialisation from `seed`: weights N(0, 0.02), the two projections into the
  /// residual stream N(0, 0.02/√(2·n_layer)), gains 1, biases 0.
  void init(std::uint64_t seed);

  /// Full forward: tokens [B, T] → loss against targets [B, T] (-1 = ignored); with targets
  /// null only the logits are computed and 0 is returned.
  T forward(const int* tokens, const int* targets, int batch, int seq_len);
  /// Full backward after forward(): adds dLoss/dθ · loss_scale into grads(), calling `ready`
  /// as each layer's gradients are complete. Needs targets.
  void backward(T loss_scale = T(1), const GradientReadyHook& ready = {});

  /// Sizes the activations for `batch` × `seq_len` (checked against max_batch and context).
  /// embed_forward calls it; a pipeline stage that starts mid-model calls it before filling
  /// residual(first) with the activations it received.
  void set_shape(int batch, int seq_len);
  /// Pipeline pieces, in order: embed_forward, layers_forward(0, L), head_forward.
  void embed_forward(const int* tokens, int batch, int seq_len);
  /// Runs layers [first, last): reads residual(first), writes residual(last).
  void layers_forward(int first, int last);
  /// Final LayerNorm, logits, loss (see forward()).
  T head_forward(const int* targets);
  /// Backward pieces, in order: head_backward, layers_backward(L, 0), embed_backward.
  void head_backward(T loss_scale, const GradientReadyHook& ready = {});
  /// Reads residual_grad(last), writes residual_grad(first), adds the layers' parameter grads.
  void layers_backward(int last, int first, const GradientReadyHook& ready = {});
  /// Adds the embedding gradients from residual_grad(0).
  void embed_backward(const GradientReadyHook& ready = {});

  /// Input of layer l (l = n_layer: the head's input), [B·T, C] of the current batch.
  T* residual(int layer) { return stream_[layer].data(); }
  /// Gradient of the loss with respect to residual(l).
  T* residual_grad(int layer) { return stream_grad_[layer].data(); }
  /// Logits of the last forward, [B·T, vocab].
  const T* logits() const { return logits_.data(); }

  /// Sets every gradient to zero.
  void zero_grad();

  const Config& config() const { return config_; }            ///< The shape.
  const ParameterLayout& layout() const { return layout_; }   ///< Where each tensor lives.
  AlignedBuffer<T>& params() { return params_; }              ///< Flat parameters.
  const AlignedBuffer<T>& params() const { return params_; }  ///< Flat parameters.
  AlignedBuffer<T>& grads() { return grads_; }                ///< Flat gradients, same layout.
  /// Bytes of activations kept for the backward pass at the current batch (plus logits/probs).
  std::size_t activation_bytes() const;

 private:
  Config config_;
  int max_batch_;
  ParameterLayout layout_;
  AlignedBuffer<T> params_, grads_;
  ModelTensors<T> p_, g_;
  int batch_ = 0, seq_len_ = 0;
  std::vector<int> tokens_, targets_;
  std::vector<std::vector<T>> stream_, stream_grad_;
  std::vector<BlockActivations<T>> acts_;
  std::vector<T> lnf_, lnf_mean_, lnf_rstd_, logits_, probs_;
};

}  // namespace book::train
