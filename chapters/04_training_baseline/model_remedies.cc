// The model's passes when a memory seam is in use (memory_seams.h): recomputation (selective,
// full) and another attention kernel. The plain passes are in model_passes.cc; these call the
// same block functions on the same numbers, so recomputation leaves every gradient bit for bit.
#include "chapters/04_training_baseline/activations.h"
#include "chapters/04_training_baseline/layers.h"
#include "chapters/04_training_baseline/model.h"
#include "common/check.h"

namespace book::train {

//! [remedy_blocks]
template <typename T>
void Activations<T>::make_remedy_blocks(const Model<T>& model) {
  const Config& config = model.config();
  const TensorParallelSlice& slice = model.part().tensor_parallel;
  MemoryTracker* tracker = model.tracker();
  const int heads = slice.heads(config);
  // What one block's attention core saves: chapter 4's probabilities, or the kernel's choice.
  const std::size_t saved =
      model.attention_kernel() != nullptr
          ? model.attention_kernel()->saved_elements(max_batch_, context_, heads)
          : static_cast<std::size_t>(max_batch_) * context_ * heads * context_;
  const Recomputation mode = model.recompute();
  // Full recomputation holds one block's activations, refilled for each block in turn.
  const int kept = mode == Recomputation::kFull ? 1 : last_layer_ - first_layer_;
  for (int j = 0; j < kept; ++j) {
    blocks_.emplace_back(config, slice, max_batch_, context_, tracker,
                         /*attention_probabilities=*/false, &model.tensor_parallelism());
    if (mode != Recomputation::kSelective)
      blocks_.back().att = TrackedBuffer<T>(saved, MemoryCategory::kActivations, tracker);
  }
  // Selective recomputation: one block's saved numbers, shared by every block.
  if (mode == Recomputation::kSelective)
    shared_saved_ = TrackedBuffer<T>(saved, MemoryCategory::kActivations, tracker);
}
//! [remedy_blocks]

template <typename T>
AttentionCore<T> Model<T>::attention_core(const Activations<T>& acts, T* saved) const {
  const int batch = acts.batch(), seq_len = acts.seq_len();
  const int heads = part().tensor_parallel.heads(config_), hs = config_.head_size();
  if (attention_ != nullptr)
    return [=, this](const T* qkv, T* out) {
      attention_->forward(qkv, batch, seq_len, heads, hs, saved, out);
    };
  return
      [=](const T* qkv, T* out) { attention_forward(qkv, batch, seq_len, heads, hs, saved, out); };
}

template <typename T>
AttentionBackwardCore<T> Model<T>::attention_backward_core(const Activations<T>& acts) const {
  if (attention_ == nullptr) return {};  // block_backward's own (chapter 4's attention)
  const int batch = acts.batch(), seq_len = acts.seq_len();
  const int heads = part().tensor_parallel.heads(config_), hs = config_.head_size();
  return [=, this](const T* dout, const T* qkv, const T* out, const T* saved, T* dqkv) {
    attention_->backward(dout, qkv, out, saved, batch, seq_len, heads, hs, dqkv);
  };
}

template <typename T>
void Model<T>::layers_forward_remedies(Activations<T>& acts, int first, int last) {
  const bool full = recompute_ == Recomputation::kFull;
  const int rows = acts.batch() * acts.seq_len();
  for (int l = first; l < last; ++l) {
    const int i = l - part().first_layer;
    BlockActivations<T>& block = acts.blocks_[full ? 0 : i];
    T* saved =
        recompute_ == Recomputation::kSelective ? acts.shared_saved_.data() : block.att.data();
    block_forward_rows(config_, part().tensor_parallel, p_.blocks[i], rows, acts.residual(l),
                       acts.residual(l + 1), block, workspace_, attention_core(acts, saved), tp_);
  }
}

//! [recompute_backward]
template <typename T>
void Model<T>::layers_backward_remedies(Activations<T>& acts, int last, int first,
                                        const GradientReadyHook& ready) {
  const int rows = acts.batch() * acts.seq_len();
  const AttentionBackwardCore<T> attention_backward = attention_backward_core(acts);
  for (int l = last - 1; l >= first; --l) {
    const int i = l - part().first_layer;
    if (recompute_ == Recomputation::kFull) {
      // Refill the one block's activations from the block's input. The output is not needed
      // again: it goes to the workspace's d_residual, which block_backward overwrites first.
      BlockActivations<T>& block = acts.blocks_[0];
      block_forward_rows(config_, part().tensor_parallel, p_.blocks[i], rows, acts.residual(l),
                         workspace_.d_residual.data(), block, workspace_,
                         attention_core(acts, block.att.data()), tp_);
    }
    BlockActivations<T>& block = acts.blocks_[recompute_ == Recomputation::kFull ? 0 : i];
    const bool selective = recompute_ == Recomputation::kSelective;
    if (selective) {
      // Rewrite what the attention core saved, from the q, k, v the block kept; the output
      // (equal to the kept att_out) goes to d_att_out, which block_backward zeroes before use.
      attention_core(acts, acts.shared_saved_.data())(block.qkv.data(),
                                                      workspace_.d_att_out.data());
      std::swap(block.att, acts.shared_saved_);  // lend it to this block (no allocation)
    }
    block_backward(config_, part().tensor_parallel, p_.blocks[i], g_.blocks[i], acts.batch(),
                   acts.seq_len(), acts.residual(l), acts.residual_grad(l + 1),
                   acts.residual_grad(l), block, workspace_, tp_, attention_backward);
    if (selective) std::swap(block.att, acts.shared_saved_);
    if (ready) {
      const auto [begin, end] = layout_.layer_range(l);
      ready(begin, end);
    }
  }
}
//! [recompute_backward]

template void Activations<float>::make_remedy_blocks(const Model<float>&);
template void Activations<double>::make_remedy_blocks(const Model<double>&);
template AttentionCore<float> Model<float>::attention_core(const Activations<float>&, float*) const;
template AttentionCore<double> Model<double>::attention_core(const Activations<double>&,
                                                             double*) const;
template AttentionBackwardCore<float> Model<float>::attention_backward_core(
    const Activations<float>&) const;
template AttentionBackwardCore<double> Model<double>::attention_backward_core(
    const Activations<double>&) const;
template void Model<float>::layers_forward_remedies(Activations<float>&, int, int);
template void Model<double>::layers_forward_remedies(Activations<double>&, int, int);
template void Model<float>::layers_backward_remedies(Activations<float>&, int, int,
                                                     const GradientReadyHook&);
template void Model<double>::layers_backward_remedies(Activations<double>&, int, int,
                                                      const GradientReadyHook&);

}  // namespace book::train
