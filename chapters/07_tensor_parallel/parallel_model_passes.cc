// The tensor-parallel model's forward and backward passes, piece by piece (parallel_model.h).
#include <algorithm>
#include <span>

#include "chapters/04_training_baseline/layers.h"
#include "chapters/07_tensor_parallel/parallel_cross_entropy.h"
#include "chapters/07_tensor_parallel/parallel_model.h"
#include "chapters/07_tensor_parallel/sequence_parallel_norm.h"
#include "chapters/07_tensor_parallel/vocab_parallel.h"
#include "common/check.h"

namespace book::tp {

template <typename T>
void ParallelModel<T>::embed_forward(ParallelActivations<T>& acts, const int* tokens, int batch,
                                     int seq_len) {
  check(acts, "embed_forward", false);
  BOOK_CHECK(part().has_embedding(), "embed_forward: this part starts at layer "
                                         << part().first_layer
                                         << " and does not hold the embeddings");
  acts.set_shape(batch, seq_len);
  const std::size_t n = static_cast<std::size_t>(batch) * seq_len;
  for (std::size_t i = 0; i < n; ++i)
    BOOK_CHECK(tokens[i] >= 0 && tokens[i] < config_.vocab_size,
               "ParallelModel: token " << tokens[i] << " at position " << i
                                       << " is outside the vocabulary 0.."
                                       << config_.vocab_size - 1);
  std::copy(tokens, tokens + n, acts.tokens_.data());
  const VocabularyShard<T> shard{p_.wte, slice().vocab_begin(config_), slice().vocab_rows(config_)};
  vocab_parallel_embedding_forward(tokens, batch, seq_len, shard, p_.wpe, config_.d_model,
                                   workspace_.partial.data(), acts.residual(0), *comm_,
                                   sequence_parallel_);
}

template <typename T>
void ParallelModel<T>::layers_forward(ParallelActivations<T>& acts, int first, int last) {
  check(acts, "layers_forward");
  BOOK_CHECK(part().first_layer <= first && first <= last && last <= part().last_layer,
             "layers_forward: range [" << first << ", " << last << ") is not inside this part's ["
                                       << part().first_layer << ", " << part().last_layer << ")");
  for (int l = first; l < last; ++l) {
    const int i = l - part().first_layer;
    parallel_block_forward(config_, slice(), sequence_parallel_, p_.blocks[i], acts.batch(),
                           acts.seq_len(), acts.residual(l), acts.residual(l + 1), acts.blocks_[i],
                           workspace_, *comm_);
  }
}

//! [parallel_head]
template <typename T>
T ParallelModel<T>::head_forward(ParallelActivations<T>& acts, const int* targets) {
  check(acts, "head_forward");
  BOOK_CHECK(part().has_head(config_), "head_forward: this part ends at layer "
                                           << part().last_layer << " and does not hold the head");
  const int n = acts.batch() * acts.seq_len(), c = config_.d_model, held = acts.held();
  const int vocab = slice().vocab_rows(config_), begin = slice().vocab_begin(config_);
  const T* x = acts.residual(config_.n_layer);
  // The final LayerNorm, then the whole normalised input of the head on every rank.
  const T* lnf = acts.lnf_.data();
  if (sequence_parallel_ == SequenceParallel::kOn) {
    sequence_parallel_norm_forward(x, p_.lnf_gain, p_.lnf_bias, held, c, acts.lnf_.data(),
                                   acts.lnf_mean_.data(), acts.lnf_rstd_.data(),
                                   workspace_.whole.data(), *comm_);
    lnf = workspace_.whole.data();
  } else {
    train::layernorm_forward(x, p_.lnf_gain, p_.lnf_bias, n, c, acts.lnf_.data(),
                             acts.lnf_mean_.data(), acts.lnf_rstd_.data());
    f_forward(std::span<const T>(lnf, static_cast<std::size_t>(n) * c), *comm_);
  }
  // The tied head, column-parallel: this rank's vocabulary columns, lnf · wte_shardᵀ.
  train::matmul<T>(false, true, n, vocab, c, T(1), lnf, c, p_.wte, c, T(0), acts.logits_.data(),
                   vocab);
  acts.has_targets_ = false;
  if (targets == nullptr) return T(0);
  for (int i = 0; i < n; ++i)
    BOOK_CHECK(targets[i] >= -1 && targets[i] < config_.vocab_size,
               "ParallelModel: target " << targets[i] << " at row " << i
                                        << " is neither -1 nor a token id");
  std::copy(targets, targets + n, acts.targets_.data());
  acts.has_targets_ = true;
  return parallel_cross_entropy_forward(acts.logits_.data(), targets, n, vocab, begin,
                                        acts.probs_.data(), cross_entropy_scratch_.data(), *comm_);
}

template <typename T>
void ParallelModel<T>::head_backward(ParallelActivations<T>& acts, T loss_scale) {
  check(acts, "head_backward");
  BOOK_CHECK(part().has_head(config_), "head_backward: this part does not hold the head");
  BOOK_CHECK(acts.has_targets_, "backward: the last forward had no targets, so there is no loss");
  const int n = acts.batch() * acts.seq_len(), c = config_.d_model, held = acts.held();
  const int vocab = slice().vocab_rows(config_), begin = slice().vocab_begin(config_);
  const std::size_t held_c = static_cast<std::size_t>(held) * c;
  parallel_cross_entropy_backward(acts.probs_.data(), acts.targets_.data(), n, vocab, begin,
                                  loss_scale, dlogits_.data());
  // d lnf (partial: this rank's vocabulary columns) and d wte (this rank's rows, complete).
  T* d_lnf = workspace_.d_ln_whole.data();
  train::matmul<T>(false, false, n, c, vocab, T(1), dlogits_.data(), vocab, p_.wte, c, T(0), d_lnf,
                   c);
  const T* lnf = acts.lnf_.data();
  if (sequence_parallel_ == SequenceParallel::kOn) {  // only this rank's tokens were kept
    gather_forward(std::span<const T>(acts.lnf_.data(), held_c),
                   std::span<T>(workspace_.whole.data(), static_cast<std::size_t>(n) * c), *comm_);
    lnf = workspace_.whole.data();
  }
  train::matmul<T>(true, false, vocab, c, n, T(1), dlogits_.data(), vocab, lnf, c, T(1), g_.wte, c);
  const T* x = acts.residual(config_.n_layer);
  T* d_stream = acts.residual_grad(config_.n_layer);
  std::fill(d_stream, d_stream + held_c, T(0));
  if (sequence_parallel_ == SequenceParallel::kOn) {
    sequence_parallel_norm_backward(d_lnf, x, p_.lnf_gain, acts.lnf_mean_.data(),
                                    acts.lnf_rstd_.data(), held, c, workspace_.d_shard.data(),
                                    d_stream, g_.lnf_gain, g_.lnf_bias, *comm_);
  } else {
    f_backward(std::span<T>(d_lnf, static_cast<std::size_t>(n) * c), *comm_);
    train::layernorm_backward(d_lnf, x, p_.lnf_gain, acts.lnf_mean_.data(), acts.lnf_rstd_.data(),
                              n, c, d_stream, g_.lnf_gain, g_.lnf_bias);
  }
}
//! [parallel_head]

template <typename T>
void ParallelModel<T>::layers_backward(ParallelActivations<T>& acts, int last, int first) {
  check(acts, "layers_backward");
  BOOK_CHECK(part().first_layer <= first && first <= last && last <= part().last_layer,
             "layers_backward: range [" << first << ", " << last << ") is not inside this part's ["
                                        << part().first_layer << ", " << part().last_layer << ")");
  for (int l = last - 1; l >= first; --l) {
    const int i = l - part().first_layer;
    parallel_block_backward(config_, slice(), sequence_parallel_, p_.blocks[i], g_.blocks[i],
                            acts.batch(), acts.seq_len(), acts.residual(l),
                            acts.residual_grad(l + 1), acts.residual_grad(l), acts.blocks_[i],
                            workspace_, *comm_);
  }
}

template <typename T>
void ParallelModel<T>::embed_backward(ParallelActivations<T>& acts) {
  check(acts, "embed_backward");
  BOOK_CHECK(part().has_embedding(), "embed_backward: this part does not hold the embeddings");
  const VocabularyShard<T> shard{p_.wte, slice().vocab_begin(config_), slice().vocab_rows(config_)};
  vocab_parallel_embedding_backward(
      acts.tokens_.data(), acts.batch(), acts.seq_len(), shard, acts.residual_grad(0),
      config_.d_model, workspace_.dy_whole.data(), g_.wte, g_.wpe, *comm_, sequence_parallel_);
}

template <typename T>
T ParallelModel<T>::forward(ParallelActivations<T>& acts, const int* tokens, const int* targets,
                            int batch, int seq_len) {
  embed_forward(acts, tokens, batch, seq_len);
  layers_forward(acts, part().first_layer, part().last_layer);
  return head_forward(acts, targets);
}

template <typename T>
void ParallelModel<T>::backward(ParallelActivations<T>& acts, T loss_scale) {
  head_backward(acts, loss_scale);
  layers_backward(acts, part().last_layer, part().first_layer);
  embed_backward(acts);
}

#define BOOK_TP_MODEL_PASSES(T)                                                                    \
  template void ParallelModel<T>::embed_forward(ParallelActivations<T>&, const int*, int, int);    \
  template void ParallelModel<T>::layers_forward(ParallelActivations<T>&, int, int);               \
  template T ParallelModel<T>::head_forward(ParallelActivations<T>&, const int*);                  \
  template void ParallelModel<T>::head_backward(ParallelActivations<T>&, T);                       \
  template void ParallelModel<T>::layers_backward(ParallelActivations<T>&, int, int);              \
  template void ParallelModel<T>::embed_backward(ParallelActivations<T>&);                         \
  template T ParallelModel<T>::forward(ParallelActivations<T>&, const int*, const int*, int, int); \
  template void ParallelModel<T>::backward(ParallelActivations<T>&, T);

BOOK_TP_MODEL_PASSES(float)
BOOK_TP_MODEL_PASSES(double)

}  // namespace book::tp
