/// @file
/// Seams where a way of saving memory plugs into the model and the trainer without the model
/// knowing which: what a micro-batch keeps of its blocks' activations (the activation policy:
/// BlockMemory, ActivationPolicy), which attention kernel the blocks call (AttentionKernel), and
/// which optimizer the trainer steps (TrainerOptimizer). Each default is this chapter's own
/// behaviour: every block's activations kept, the materialising attention of layers.h, AdamW with
/// FP32 moments (adamw_state.h).
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <span>

#include "chapters/04_training_baseline/block.h"
#include "chapters/04_training_baseline/optimizer.h"
#include "chapters/04_training_baseline/parameters.h"
#include "common/memory.h"

namespace book::train {

template <typename T>
class Model;
template <typename T>
class Activations;

/// What one micro-batch keeps of its blocks' activations between the forward and the backward
/// pass, and how each block's backward gets back what was not kept. The Model runs every block
/// through it (layers_forward, layers_backward); it runs the block with the Model's one-block
/// passes (Model::forward_block, backward_block, rerun_attention) on buffers it chose. This
/// chapter's keeps every block's activations; one that keeps less recomputes the rest before the
/// block's backward. Its buffers report to the model's tracker as kActivations.
template <typename T>
class BlockMemory {
 public:
  virtual ~BlockMemory() = default;
  /// Runs block `layer`'s forward on `acts`' micro-batch, keeping what this memory keeps.
  virtual void forward(Model<T>& model, Activations<T>& acts, int layer) = 0;
  /// Runs block `layer`'s backward, first recomputing what the forward did not keep.
  virtual void backward(Model<T>& model, Activations<T>& acts, int layer) = 0;
  /// Block `layer`'s activations, whole, when this memory keeps them (and only them) from the
  /// forward to the backward; null otherwise.
  virtual BlockActivations<T>* kept(int layer) = 0;
  /// Bytes of every buffer it holds.
  virtual std::size_t bytes() const = 0;
};

/// The activation policy: makes the BlockMemory of each micro-batch of `model` (one per
/// Activations). Empty: every block keeps all its activations.
template <typename T>
using ActivationPolicy = std::function<std::unique_ptr<BlockMemory<T>>(const Model<T>& model)>;

/// The causal attention core a block calls between its qkv projection and its output projection,
/// for whole sequences (qkv [B·T, 3·h·D] in layers.h's layout, out [B·T, h·D]). What the forward
/// keeps for the backward, `saved`, is the kernel's choice: chapter 4's kernel keeps the
/// probabilities (B·h·T·T numbers); a tiled kernel keeps one log-sum-exp per row (B·h·T).
/// Implementations must be deterministic: an activation policy that recomputes relies on a second
/// forward giving the same numbers.
template <typename T>
class AttentionKernel {
 public:
  virtual ~AttentionKernel() = default;
  /// Elements of `saved` for `batch` sequences of `seq_len` positions and `heads` heads.
  virtual std::size_t saved_elements(int batch, int seq_len, int heads) const = 0;
  /// Writes out and saved from qkv.
  virtual void forward(const T* qkv, int batch, int seq_len, int heads, int head_size, T* saved,
                       T* out) const = 0;
  /// Writes (overwrites) dqkv from dout and what the forward read and wrote.
  virtual void backward(const T* dout, const T* qkv, const T* out, const T* saved, int batch,
                        int seq_len, int heads, int head_size, T* dqkv) const = 0;
};

/// The optimizer a Trainer steps instead of its own AdamW (TrainOptions::optimizer). It owns its
/// state and reports it to the tracker it was made with; the trainer then allocates no Adam
/// moments of its own.
class TrainerOptimizer {
 public:
  virtual ~TrainerOptimizer() = default;
  /// One update of the FP32 weights `master` (every parameter, in `layout`'s order) with the
  /// unscaled, clipped gradients `grads` at learning rate `lr`. Weight decay applies where
  /// the layout says so (as adamw_update does).
  virtual void update(std::span<float> master, std::span<const float> grads, float lr,
                      const AdamWConfig& config) = 0;
  /// The FP32 master weights, when the optimizer holds them itself (in another memory than the
  /// model's, say): a mixed-precision trainer then allocates none and updates these. Empty (the
  /// default): the trainer holds them.
  virtual std::span<float> master_weights() { return {}; }
};

/// Makes the optimizer of a run: for the parameters of `layout`, its state reported to `tracker`.
using TrainerOptimizerFactory = std::function<std::unique_ptr<TrainerOptimizer>(
    const ParameterLayout& layout, MemoryTracker* tracker)>;

}  // namespace book::train
