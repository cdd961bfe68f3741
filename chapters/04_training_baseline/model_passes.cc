// The model part's forward and backward passes, piece by piece (model.h).
#include <algorithm>

#include "chapters/04_training_baseline/layers.h"
#include "chapters/04_training_baseline/model.h"
#include "chapters/04_training_baseline/profile.h"
#include "common/check.h"

namespace book::train {

template <typename T>
void Model<T>::embed_forward(Activations<T>& acts, const int* tokens, int batch, int seq_len) {
  check(acts, "embed_forward", false);
  BOOK_CHECK(part().has_embedding(), "embed_forward: this part starts at layer "
                                         << part().first_layer
                                         << " and does not hold the embeddings");
  acts.set_shape(batch, seq_len);
  const std::size_t n = static_cast<std::size_t>(batch) * seq_len;
  for (std::size_t i = 0; i < n; ++i)
    BOOK_CHECK(tokens[i] >= 0 && tokens[i] < config_.vocab_size,
               "Model: token " << tokens[i] << " at position " << i
                               << " is outside the vocabulary 0.." << config_.vocab_size - 1);
  std::copy(tokens, tokens + n, acts.tokens_.data());
  const TensorParallelSlice& slice = part().tensor_parallel;
  tp_->embedding_forward(tokens, batch, seq_len, p_.wte, slice.vocab_begin(config_),
                         slice.vocab_rows(config_), p_.wpe, config_.d_model, acts.residual(0));
}

template <typename T>
void Model<T>::layers_forward(Activations<T>& acts, int first, int last) {
  check(acts, "layers_forward");
  BOOK_CHECK(part().first_layer <= first && first <= last && last <= part().last_layer,
             "layers_forward: range [" << first << ", " << last << ") is not inside this part's ["
                                       << part().first_layer << ", " << part().last_layer << ")");
  // The micro-batch's BlockMemory runs each block (forward_block), keeping what the activation
  // policy keeps: by default each block's activations in a BlockActivations of its own.
  for (int l = first; l < last; ++l) acts.blocks_->forward(*this, acts, l);
}

template <typename T>
T Model<T>::head_forward(Activations<T>& acts, const int* targets) {
  check(acts, "head_forward");
  BOOK_CHECK(part().has_head(config_), "head_forward: this part ends at layer "
                                           << part().last_layer << " and does not hold the head");
  const int n = acts.batch() * acts.seq_len(), c = config_.d_model;
  const TensorParallelSlice& slice = part().tensor_parallel;
  const int v = slice.vocab_rows(config_), begin = slice.vocab_begin(config_);
  // The final LayerNorm enters the head's region: its whole rows, on every rank.
  const T* lnf = tp_->norm_forward(acts.residual(config_.n_layer), p_.lnf_gain, p_.lnf_bias, n, c,
                                   acts.lnf_.data(), acts.lnf_mean_.data(), acts.lnf_rstd_.data());
  {
    const LayerScope scope("LM head forward (GEMM)");
    // Tied head: logits = lnf · wteᵀ, the embedding matrix (this rank's rows of it) read
    // transposed: the logits of the vocabulary ids this rank holds.
    matmul<T>(false, true, n, v, c, T(1), lnf, c, p_.wte, c, T(0), acts.logits_.data(), v);
  }
  acts.has_targets_ = false;
  if (targets == nullptr) return T(0);
  for (int i = 0; i < n; ++i)
    BOOK_CHECK(
        targets[i] >= -1 && targets[i] < config_.vocab_size,
        "Model: target " << targets[i] << " at row " << i << " is neither -1 nor a token id");
  std::copy(targets, targets + n, acts.targets_.data());
  acts.has_targets_ = true;
  return tp_->cross_entropy_forward(acts.logits_.data(), targets, n, begin, v, acts.probs_.data());
}

template <typename T>
void Model<T>::head_backward(Activations<T>& acts, T loss_scale, const GradientReadyHook& ready) {
  check(acts, "head_backward");
  BOOK_CHECK(part().has_head(config_), "head_backward: this part does not hold the head");
  BOOK_CHECK(acts.has_targets_, "backward: the last forward had no targets, so there is no loss");
  const int n = acts.batch() * acts.seq_len(), c = config_.d_model;
  const TensorParallelSlice& slice = part().tensor_parallel;
  const int v = slice.vocab_rows(config_), begin = slice.vocab_begin(config_);
  T* dlogits = dlogits_.data();
  T* dlnf = dlnf_.data();
  tp_->cross_entropy_backward(acts.probs_.data(), acts.targets_.data(), n, begin, v, loss_scale,
                              dlogits);
  {
    const LayerScope scope("LM head backward (GEMMs)");
    std::fill(dlnf, dlnf + static_cast<std::size_t>(n) * c, T(0));
    matmul<T>(false, false, n, c, v, T(1), dlogits, v, p_.wte, c, T(1), dlnf, c);
    matmul<T>(true, false, v, c, n, T(1), dlogits, v, tp_->whole_rows(acts.lnf_.data(), n, c), c,
              T(1), g_.wte, c);
  }
  tp_->complete_input_gradient(dlnf, n, c);  // this rank's vocabulary ids' share of d lnf
  T* d_stream = acts.residual_grad(config_.n_layer);
  std::fill(d_stream, d_stream + static_cast<std::size_t>(acts.held_rows()) * c, T(0));
  tp_->norm_backward(dlnf, acts.residual(config_.n_layer), p_.lnf_gain, acts.lnf_mean_.data(),
                     acts.lnf_rstd_.data(), n, c, d_stream, g_.lnf_gain, g_.lnf_bias);
  if (ready) {
    const auto [begin, end] = layout_.head_range();
    ready(begin, end);
  }
}

template <typename T>
void Model<T>::layers_backward(Activations<T>& acts, int last, int first,
                               const GradientReadyHook& ready) {
  check(acts, "layers_backward");
  BOOK_CHECK(part().first_layer <= first && first <= last && last <= part().last_layer,
             "layers_backward: range [" << first << ", " << last << ") is not inside this part's ["
                                        << part().first_layer << ", " << part().last_layer << ")");
  for (int l = last - 1; l >= first; --l) {
    acts.blocks_->backward(*this, acts, l);  // backward_block, after any recomputation
    if (ready) {
      const auto [begin, end] = layout_.layer_range(l);
      ready(begin, end);
    }
  }
}

template <typename T>
void Model<T>::embed_backward(Activations<T>& acts, const GradientReadyHook& ready) {
  check(acts, "embed_backward");
  BOOK_CHECK(part().has_embedding(), "embed_backward: this part does not hold the embeddings");
  const TensorParallelSlice& slice = part().tensor_parallel;
  tp_->embedding_backward(acts.tokens_.data(), acts.batch(), acts.seq_len(),
                          slice.vocab_begin(config_), slice.vocab_rows(config_),
                          acts.residual_grad(0), config_.d_model, g_.wte, g_.wpe);
  if (ready) {
    const auto [begin, end] = layout_.embedding_range();
    ready(begin, end);
  }
}

template <typename T>
int Model<T>::block_index(const Activations<T>& acts, int layer, const char* who) const {
  check(acts, who);
  BOOK_CHECK(part().first_layer <= layer && layer < part().last_layer,
             who << ": block " << layer << " is not one of this part's blocks "
                 << part().first_layer << ".." << part().last_layer - 1);
  return layer - part().first_layer;
}

// The attention core the blocks call: chapter 4's (layers.h), or the kernel's, writing what it
// saves for the backward into `saved`.
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
void Model<T>::forward_block(Activations<T>& acts, int layer, BlockActivations<T>& keep, T* saved,
                             bool rerun) {
  const int i = block_index(acts, layer, "forward_block");
  // A rerun's output equals residual(layer + 1): it goes to the workspace's d_residual, which
  // block_backward overwrites before it reads it.
  T* out = rerun ? workspace_.d_residual.data() : acts.residual(layer + 1);
  block_forward_rows(config_, part().tensor_parallel, p_.blocks[i], acts.batch() * acts.seq_len(),
                     acts.residual(layer), out, keep, workspace_, attention_core(acts, saved), tp_);
}

template <typename T>
void Model<T>::rerun_attention(const Activations<T>& acts, const BlockActivations<T>& block,
                               T* saved) {
  check(acts, "rerun_attention");
  // The output equals block.att_out: it goes to d_att_out, which block_backward zeroes first.
  attention_core(acts, saved)(block.qkv.data(), workspace_.d_att_out.data());
}

template <typename T>
void Model<T>::backward_block(Activations<T>& acts, int layer, BlockActivations<T>& kept) {
  const int i = block_index(acts, layer, "backward_block");
  AttentionBackwardCore<T> attention_backward;  // empty: block_backward's own (chapter 4's)
  if (attention_ != nullptr) {
    const int batch = acts.batch(), seq_len = acts.seq_len();
    const int heads = part().tensor_parallel.heads(config_), hs = config_.head_size();
    attention_backward = [=, this](const T* dout, const T* qkv, const T* out, const T* saved,
                                   T* dqkv) {
      attention_->backward(dout, qkv, out, saved, batch, seq_len, heads, hs, dqkv);
    };
  }
  block_backward(config_, part().tensor_parallel, p_.blocks[i], g_.blocks[i], acts.batch(),
                 acts.seq_len(), acts.residual(layer), acts.residual_grad(layer + 1),
                 acts.residual_grad(layer), kept, workspace_, tp_, attention_backward);
}

// The members defined here, for the two number types (the class itself is instantiated in
// model.cc).
#define BOOK_MODEL_PASSES(T)                                                                      \
  template void Model<T>::embed_forward(Activations<T>&, const int*, int, int);                   \
  template void Model<T>::layers_forward(Activations<T>&, int, int);                              \
  template T Model<T>::head_forward(Activations<T>&, const int*);                                 \
  template void Model<T>::head_backward(Activations<T>&, T, const GradientReadyHook&);            \
  template void Model<T>::layers_backward(Activations<T>&, int, int, const GradientReadyHook&);   \
  template void Model<T>::embed_backward(Activations<T>&, const GradientReadyHook&);              \
  template void Model<T>::forward_block(Activations<T>&, int, BlockActivations<T>&, T*, bool);    \
  template void Model<T>::rerun_attention(const Activations<T>&, const BlockActivations<T>&, T*); \
  template void Model<T>::backward_block(Activations<T>&, int, BlockActivations<T>&);

BOOK_MODEL_PASSES(float)
BOOK_MODEL_PASSES(double)

}  // namespace book::train
