#include "chapters/04_training_baseline/model.h"

#include <algorithm>
#include <cmath>

#include "chapters/04_training_baseline/layers.h"
#include "common/check.h"
#include "common/rng.h"

namespace book::train {

template <typename T>
Model<T>::Model(const Config& config, int max_batch)
    : config_(config),
      max_batch_(max_batch),
      layout_(config),
      params_(layout_.total()),
      grads_(layout_.total(), T(0)) {
  BOOK_CHECK(max_batch >= 1, "Model: max_batch must be >= 1, got " << max_batch);
  p_ = bind(layout_, config.n_layer, params_.data());
  g_ = bind(layout_, config.n_layer, grads_.data());
  stream_.resize(config.n_layer + 1);
  stream_grad_.resize(config.n_layer + 1);
  acts_.resize(config.n_layer);
}

template <typename T>
void Model<T>::init(std::uint64_t seed) {
  Rng rng(seed);
  const double residual_std = 0.02 / std::sqrt(2.0 * config_.n_layer);
  for (const auto& slot : layout_.slots()) {
    T* data = params_.data() + slot.offset;
    const bool is_gain = slot.name.find("gain") != std::string::npos;
    const bool is_projection = slot.name.ends_with("w_out") || slot.name.ends_with("w_proj");
    for (std::size_t i = 0; i < slot.size(); ++i) {
      if (is_gain)
        data[i] = T(1);
      else if (!slot.decay)
        data[i] = T(0);  // biases
      else
        data[i] = static_cast<T>(rng.normal() * (is_projection ? residual_std : 0.02));
    }
  }
}

template <typename T>
void Model<T>::zero_grad() {
  std::fill(grads_.begin(), grads_.end(), T(0));
}

template <typename T>
void Model<T>::set_shape(int batch, int seq_len) {
  BOOK_CHECK(batch >= 1 && batch <= max_batch_, "Model: batch "
                                                    << batch << " is outside 1.." << max_batch_
                                                    << " (the max_batch it was built for)");
  BOOK_CHECK(
      seq_len >= 1 && seq_len <= config_.context,
      "Model: seq_len " << seq_len << " is outside 1.." << config_.context << " (the context)");
  if (batch == batch_ && seq_len == seq_len_) return;
  batch_ = batch;
  seq_len_ = seq_len;
  const std::size_t n = static_cast<std::size_t>(batch) * seq_len;
  for (auto& v : stream_) v.resize(n * config_.d_model);
  for (auto& v : stream_grad_) v.resize(n * config_.d_model);
  for (auto& a : acts_) a.resize(config_, Shard{}, batch, seq_len);
  lnf_.resize(n * config_.d_model);
  lnf_mean_.resize(n);
  lnf_rstd_.resize(n);
  logits_.resize(n * config_.vocab_size);
  probs_.resize(n * config_.vocab_size);
}

template <typename T>
void Model<T>::embed_forward(const int* tokens, int batch, int seq_len) {
  set_shape(batch, seq_len);
  const std::size_t n = static_cast<std::size_t>(batch) * seq_len;
  for (std::size_t i = 0; i < n; ++i)
    BOOK_CHECK(tokens[i] >= 0 && tokens[i] < config_.vocab_size,
               "Model: token " << tokens[i] << " at position " << i
                               << " is outside the vocabulary 0.." << config_.vocab_size - 1);
  tokens_.assign(tokens, tokens + n);
  embedding_forward(tokens, batch, seq_len, p_.wte, p_.wpe, config_.d_model, stream_[0].data());
}

template <typename T>
void Model<T>::layers_forward(int first, int last) {
  BOOK_CHECK(0 <= first && first <= last && last <= config_.n_layer && batch_ > 0,
             "layers_forward: bad range [" << first << ", " << last << ") or no embed_forward yet");
  for (int l = first; l < last; ++l)
    block_forward(config_, p_.blocks[l], Shard{}, batch_, seq_len_, stream_[l].data(),
                  stream_[l + 1].data(), acts_[l]);
}

template <typename T>
T Model<T>::head_forward(const int* targets) {
  const int n = batch_ * seq_len_, c = config_.d_model, v = config_.vocab_size;
  layernorm_forward(stream_[config_.n_layer].data(), p_.lnf_gain, p_.lnf_bias, n, c, lnf_.data(),
                    lnf_mean_.data(), lnf_rstd_.data());
  // Tied head: logits = lnf · wteᵀ, the embedding matrix read transposed.
  matmul<T>(false, true, n, v, c, T(1), lnf_.data(), c, p_.wte, c, T(0), logits_.data(), v);
  if (targets == nullptr) {
    targets_.clear();
    return T(0);
  }
  for (int i = 0; i < n; ++i)
    BOOK_CHECK(targets[i] >= -1 && targets[i] < v, "Model: target "
                                                       << targets[i] << " at row " << i
                                                       << " is neither -1 nor a token id");
  targets_.assign(targets, targets + n);
  return cross_entropy_forward(logits_.data(), targets, n, v, probs_.data());
}

template <typename T>
void Model<T>::head_backward(T loss_scale, const GradientReadyHook& ready) {
  BOOK_CHECK(!targets_.empty(), "backward: the last forward had no targets, so there is no loss");
  const int n = batch_ * seq_len_, c = config_.d_model, v = config_.vocab_size;
  std::vector<T> dlogits(static_cast<std::size_t>(n) * v),
      dlnf(static_cast<std::size_t>(n) * c, T(0));
  cross_entropy_backward(probs_.data(), targets_.data(), n, v, loss_scale, dlogits.data());
  matmul<T>(false, false, n, c, v, T(1), dlogits.data(), v, p_.wte, c, T(1), dlnf.data(), c);
  matmul<T>(true, false, v, c, n, T(1), dlogits.data(), v, lnf_.data(), c, T(1), g_.wte, c);
  T* d_stream = stream_grad_[config_.n_layer].data();
  std::fill(d_stream, d_stream + dlnf.size(), T(0));
  layernorm_backward(dlnf.data(), stream_[config_.n_layer].data(), p_.lnf_gain, lnf_mean_.data(),
                     lnf_rstd_.data(), n, c, d_stream, g_.lnf_gain, g_.lnf_bias);
  if (ready) ready(layout_.find("lnf_gain").offset, layout_.total());
}

template <typename T>
void Model<T>::layers_backward(int last, int first, const GradientReadyHook& ready) {
  BOOK_CHECK(0 <= first && first <= last && last <= config_.n_layer,
             "layers_backward: bad range [" << first << ", " << last << ")");
  for (int l = last - 1; l >= first; --l) {
    block_backward(config_, p_.blocks[l], g_.blocks[l], Shard{}, batch_, seq_len_,
                   stream_[l].data(), stream_grad_[l + 1].data(), stream_grad_[l].data(), acts_[l]);
    if (ready) {
      const auto [begin, end] = layout_.layer_range(l);
      ready(begin, end);
    }
  }
}

template <typename T>
void Model<T>::embed_backward(const GradientReadyHook& ready) {
  embedding_backward(tokens_.data(), batch_, seq_len_, stream_grad_[0].data(), config_.d_model,
                     g_.wte, g_.wpe);
  if (ready) ready(0, layout_.layer_range(0).first);
}

//! [model_forward]
template <typename T>
T Model<T>::forward(const int* tokens, const int* targets, int batch, int seq_len) {
  embed_forward(tokens, batch, seq_len);
  layers_forward(0, config_.n_layer);
  return head_forward(targets);
}
//! [model_forward]

template <typename T>
void Model<T>::backward(T loss_scale, const GradientReadyHook& ready) {
  head_backward(loss_scale, ready);
  layers_backward(config_.n_layer, 0, ready);
  embed_backward(ready);
}

template <typename T>
std::size_t Model<T>::activation_bytes() const {
  std::size_t total = 0;
  for (const auto& a : acts_) total += a.bytes();
  for (const auto& v : stream_) total += v.size() * sizeof(T);
  for (const auto* v : {&lnf_, &lnf_mean_, &lnf_rstd_, &logits_, &probs_})
    total += v->size() * sizeof(T);
  return total;
}

template class Model<float>;
template class Model<double>;

}  // namespace book::train
