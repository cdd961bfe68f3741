/// @file
/// The GPT: embeddings, blocks, final LayerNorm, tied LM head, cross-entropy loss — or any part
/// of it (partition.h): a range of its layers, a slice of every block, or both; each part holds
/// only its own parameters. The whole model on one device is the part "all layers, slice 0 of 1".
///
/// The forward and backward passes are split at the residual stream so a part that holds a range
/// of layers can run just its range: embed_forward (first part), layers_forward, head_forward
/// (last part), and their backward twins in reverse. Each works on an Activations object, one per
/// micro-batch in flight.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>

#include "chapters/04_training_baseline/activations.h"
#include "chapters/04_training_baseline/block.h"
#include "chapters/04_training_baseline/config.h"
#include "chapters/04_training_baseline/memory_seams.h"
#include "chapters/04_training_baseline/parameters.h"
#include "chapters/04_training_baseline/partition.h"
#include "chapters/04_training_baseline/tensor_parallelism.h"
#include "common/memory.h"

namespace book::train {

/// Called during the backward pass each time the gradients of flat elements [begin, end) are
/// final for this micro-batch: first the head's (final LayerNorm), then block L-1, ..., block 0,
/// then the embeddings (the tied wte is final only after the embedding's backward, since the LM
/// head also adds into it). On the whole model the ranges tile the flat buffer; on a stage they
/// tile the stage's buffer (a last stage without the embeddings reports its copy of wte with the
/// head's range: final for the stage, still to be summed with the first stage's). Whatever
/// needs a layer's final gradients (sending them to another device, say) can start from here
/// while the backward pass goes on through the layers below. Empty: no call.
using GradientReadyHook = std::function<void(std::size_t begin, std::size_t end)>;

/// GPT-2's initialisation from `seed` (see Model::init) of the part `layout` describes, into
/// `params` (layout.total() elements): exactly that part's share of the whole model's values, so
/// a buffer that is not a Model's starts where the one-device run does. Throws book::Error if the
/// buffer's size differs from the layout's.
template <typename T>
void init_parameters(const ParameterLayout& layout, std::uint64_t seed, std::span<T> params);

/// How a Model is built besides its shape. The defaults build this chapter's model: all of it,
/// on one device, holding its own parameters and every activation, with layers.h's attention.
template <typename T>
struct ModelOptions {
  /// Which blocks the model holds, and which slice of each block's heads, MLP units and
  /// vocabulary rows (partition.h): it allocates, initialises and runs only those. Default: every
  /// block, whole.
  ModelPart part;
  /// What a block's projections, LayerNorms, embedding and loss do with the slice's share of the
  /// work (tensor_parallelism.h): its rank and size must be the slice's, and it is required when
  /// the slice is one of several. Null: OneDevice, chapter 4's layers on whole tensors. Not owned;
  /// must outlive the model.
  TensorParallelism<T>* tensor_parallel = nullptr;
  /// Receives the model's allocations (null: none reported). Not owned; must outlive the model.
  MemoryTracker* tracker = nullptr;
  /// The category the parameter buffer is reported under: kParameters, or kOther when it is
  /// scratch, as in the mixed-precision Trainer, where it is the FP32 copy of the 16-bit weights
  /// that only a CPU needs.
  MemoryCategory parameter_category = MemoryCategory::kParameters;
  /// The category of the gradient buffer (as above).
  MemoryCategory gradient_category = MemoryCategory::kGradients;
  /// false: the model allocates neither its parameter nor its gradient buffer (params() and
  /// grads() are empty, init() and zero_grad() have nothing to work on) and every tensor points
  /// nowhere until the caller points it at buffers it owns with Model::bind_range, one range (a
  /// layer, say) at a time if it likes: the caller then decides where the weights live and for
  /// how long.
  bool own_parameters = true;
  /// What each micro-batch keeps of the blocks' activations for the backward pass, and so what
  /// the backward recomputes (memory_seams.h); empty: every block keeps all of its own, which
  /// Activations::block hands out.
  ActivationPolicy<T> activation_policy;
  /// The blocks' attention core (memory_seams.h); null: chapter 4's attention_forward and
  /// attention_backward, which keep the probabilities. Not owned; must outlive the model.
  const AttentionKernel<T>* attention = nullptr;
};

/// A model part: its flat parameter and gradient buffers and a workspace for one micro-batch of
/// up to max_batch × context tokens. T is float for training, double for the tests. What it
/// allocates, all at construction: parameters and gradients (layout().total() elements each), a
/// BlockWorkspace (block.h) and, for the last part, the head's workspace of
/// max_batch · context · (V + C) elements (kOther; V: the vocabulary rows the slice holds).
template <typename T>
class Model {
 public:
  /// A model part of `config` whose activations fit `max_batch` sequences; parameters
  /// uninitialised, gradients zero.
  Model(const Config& config, int max_batch, const ModelOptions<T>& options = {});
  Model(const Model&) = delete;             ///< Views point into the buffers: no copies.
  Model& operator=(const Model&) = delete;  ///< Views point into the buffers: no copies.
  ~Model();

  /// GPT-2's initialisation from `seed`: weights N(0, 0.02), the two projections into the
  /// residual stream N(0, 0.02/√(2·n_layer)), gains 1, biases 0. A part gets exactly its share
  /// of the whole model's initialisation with the same seed.
  void init(std::uint64_t seed);

  /// Full forward (a part with the embeddings and the head): tokens [B, T] → loss against
  /// targets [B, T] (-1 = ignored); with targets null only the logits are computed and 0 is
  /// returned.
  T forward(Activations<T>& acts, const int* tokens, const int* targets, int batch, int seq_len);
  /// Full backward after forward(acts, ...): adds dLoss/dθ · loss_scale into grads(), calling
  /// `ready` as each layer's gradients are complete. Needs targets.
  void backward(Activations<T>& acts, T loss_scale = T(1), const GradientReadyHook& ready = {});

  /// forward() on the model's own Activations (made on first use).
  T forward(const int* tokens, const int* targets, int batch, int seq_len);
  /// backward() on the model's own Activations.
  void backward(T loss_scale = T(1), const GradientReadyHook& ready = {});
  /// Logits of the last forward() on the model's own Activations, [B·T, vocab].
  const T* logits() const;
  /// The model's own Activations (made on first use).
  Activations<T>& activations();

  /// Pipeline pieces, in order: embed_forward (first part), layers_forward, head_forward (last).
  void embed_forward(Activations<T>& acts, const int* tokens, int batch, int seq_len);
  /// Runs layers [first, last) of this part: reads residual(first), writes residual(last).
  void layers_forward(Activations<T>& acts, int first, int last);
  /// Final LayerNorm, logits, loss (see forward()).
  T head_forward(Activations<T>& acts, const int* targets);
  /// Backward pieces, in order: head_backward, layers_backward, embed_backward.
  void head_backward(Activations<T>& acts, T loss_scale, const GradientReadyHook& ready = {});
  /// Reads residual_grad(last), writes residual_grad(first), adds the layers' parameter grads.
  void layers_backward(Activations<T>& acts, int last, int first,
                       const GradientReadyHook& ready = {});
  /// Adds the embedding gradients from residual_grad(0).
  void embed_backward(Activations<T>& acts, const GradientReadyHook& ready = {});

  /// Sets every gradient to zero.
  void zero_grad();
  /// After a step's last backward pass: lets the seam complete the gradients it left partial
  /// (nothing on one device).
  void finish_gradients();
  /// Σ g² over grads(), in double, with every replicated tensor counted by slice rank 0 only:
  /// the sum over a tensor-parallel group is the whole model's Σ g² (on one device, all of it).
  double gradient_sum_of_squares() const;

  /// Points every tensor lying inside flat elements [begin, end) of layout() (a layer_range,
  /// embedding_range or head_range) at caller-owned buffers: its parameters at
  /// params + (offset − begin), its gradients likewise in `grads` (both end − begin elements,
  /// not owned; they must outlive their use). Tensors outside the range keep their pointers; a
  /// range may be re-pointed any time between passes. Throws book::Error if a pointer is null,
  /// the range leaves the buffer or cuts a tensor.
  void bind_range(std::size_t begin, std::size_t end, T* params, T* grads);

  /// The tied token embedding / LM head matrix wte [V, C] in params(): held by the first part
  /// (embedding) and by the last (head); throws book::Error for a part with neither.
  std::span<T> tied_embedding();
  /// Its gradient in grads(). The first and last pipeline stages each add their use into their
  /// own copy; summing the two (an all-reduce between those stages) gives the whole model's.
  std::span<T> tied_embedding_grad();

  const Config& config() const { return config_; }            ///< The shape.
  const ModelPart& part() const { return layout_.part(); }    ///< The part held (resolved).
  const ParameterLayout& layout() const { return layout_; }   ///< Where each tensor lives.
  int max_batch() const { return max_batch_; }                ///< Sequences per micro-batch.
  MemoryTracker* tracker() const { return tracker_; }         ///< Where allocations report.
  TrackedBuffer<T>& params() { return params_; }              ///< Flat parameters.
  const TrackedBuffer<T>& params() const { return params_; }  ///< Flat parameters.
  TrackedBuffer<T>& grads() { return grads_; }                ///< Flat gradients, same layout.
  const TrackedBuffer<T>& grads() const { return grads_; }    ///< Flat gradients, same layout.
  /// Bytes of the workspace (block and head scratch).
  std::size_t workspace_bytes() const;
  /// The activation policy (ModelOptions::activation_policy; empty: keep everything).
  const ActivationPolicy<T>& activation_policy() const { return activation_policy_; }
  /// The blocks' attention kernel (ModelOptions::attention; null: chapter 4's).
  const AttentionKernel<T>* attention_kernel() const { return attention_; }
  /// The tensor-parallel seam (ModelOptions::tensor_parallel, or OneDevice).
  TensorParallelism<T>& tensor_parallelism() const { return *tp_; }

  /// One block's passes, for a BlockMemory (memory_seams.h), which chooses where each block
  /// keeps its activations. Block `layer` of the part on `acts`' micro-batch: reads
  /// residual(layer), writes residual(layer + 1), keeps its activations in `keep` and what the
  /// attention core saves for the backward in `saved` (attention_saved_elements() numbers; keep.att
  /// is not touched). With `rerun`, the same forward again before the block's backward, for its
  /// activations only: its output, already in residual(layer + 1), goes to scratch.
  void forward_block(Activations<T>& acts, int layer, BlockActivations<T>& keep, T* saved,
                     bool rerun = false);
  /// The attention core of a block alone again, from the q, k, v `block` kept: rewrites `saved`
  /// (the output, equal to block.att_out, goes to scratch).
  void rerun_attention(const Activations<T>& acts, const BlockActivations<T>& block, T* saved);
  /// Block `layer`'s backward from `kept`, whole (its att holding what the attention core saved):
  /// reads residual_grad(layer + 1), writes residual_grad(layer), adds the block's gradients.
  void backward_block(Activations<T>& acts, int layer, BlockActivations<T>& kept);
  /// Room for one block's activations for max_batch × context rows, reported to the tracker;
  /// with `with_saved` its att holds attention_saved_elements() numbers, else it is empty.
  BlockActivations<T> block_activations(bool with_saved = true) const;
  /// What the attention core saves for the backward, per block, at max_batch × context: the
  /// probabilities (B·h·T·T numbers) of chapter 4's attention, or the kernel's saved_elements.
  std::size_t attention_saved_elements() const;

 private:
  void check(const Activations<T>& acts, const char* who, bool needs_shape = true) const;
  std::span<T> wte_of(TrackedBuffer<T>& buffer);
  int block_index(const Activations<T>& acts, int layer, const char* who) const;
  AttentionCore<T> attention_core(const Activations<T>& acts, T* saved) const;

  Config config_;
  int max_batch_;
  ParameterLayout layout_;
  TensorParallelism<T>* tp_;
  MemoryTracker* tracker_;
  TrackedBuffer<T> params_, grads_;
  ModelTensors<T> p_, g_;
  BlockWorkspace<T> workspace_;
  TrackedBuffer<T> dlogits_, dlnf_;  // the head's backward scratch
  std::unique_ptr<Activations<T>> own_activations_;
  ActivationPolicy<T> activation_policy_;
  const AttentionKernel<T>* attention_ = nullptr;
};

}  // namespace book::train
