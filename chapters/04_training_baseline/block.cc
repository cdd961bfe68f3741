#include "chapters/04_training_baseline/block.h"

#include <algorithm>

#include "chapters/04_training_baseline/layers.h"
#include "common/check.h"

namespace book::train {

Shard Shard::resolved(const Config& config) const {
  Shard s = *this;
  if (s.head_end < 0) s.head_end = config.n_head;
  if (s.hidden_end < 0) s.hidden_end = config.d_ff();
  BOOK_CHECK(0 <= s.head_begin && s.head_begin < s.head_end && s.head_end <= config.n_head,
             "Shard: heads [" << s.head_begin << ", " << s.head_end << ") do not fit in 0.."
                              << config.n_head);
  BOOK_CHECK(0 <= s.hidden_begin && s.hidden_begin < s.hidden_end && s.hidden_end <= config.d_ff(),
             "Shard: hidden units [" << s.hidden_begin << ", " << s.hidden_end
                                     << ") do not fit in 0.." << config.d_ff());
  return s;
}

template <typename T>
void BlockActivations<T>::resize(const Config& config, const Shard& shard, int batch, int seq_len) {
  const Shard s = shard.resolved(config);
  const std::size_t n = static_cast<std::size_t>(batch) * seq_len, c = config.d_model;
  const std::size_t heads = s.head_end - s.head_begin, width = heads * config.head_size();
  const std::size_t hidden = s.hidden_end - s.hidden_begin;
  for (auto* v : {&ln1, &residual, &ln2}) v->resize(n * c);
  for (auto* v : {&ln1_mean, &ln1_rstd, &ln2_mean, &ln2_rstd}) v->resize(n);
  qkv.resize(n * 3 * width);
  att.resize(static_cast<std::size_t>(batch) * heads * seq_len * seq_len);
  att_out.resize(n * width);
  fc.resize(n * hidden);
  fc_gelu.resize(n * hidden);
}

template <typename T>
std::size_t BlockActivations<T>::bytes() const {
  std::size_t total = 0;
  for (const auto* v : {&ln1, &ln1_mean, &ln1_rstd, &qkv, &att, &att_out, &residual, &ln2,
                        &ln2_mean, &ln2_rstd, &fc, &fc_gelu})
    total += v->size() * sizeof(T);
  return total;
}

template <typename T>
void block_forward(const Config& config, const BlockTensors<T>& w, const Shard& shard, int batch,
                   int seq_len, const T* x, T* y, BlockActivations<T>& a,
                   const AllReduce<T>& reduce) {
  const Shard s = shard.resolved(config);
  const int n = batch * seq_len, c = config.d_model, hs = config.head_size(), f = config.d_ff();
  const int heads = s.head_end - s.head_begin, width = heads * hs;
  const int hidden = s.hidden_end - s.hidden_begin;
  BOOK_CHECK(a.qkv.size() == static_cast<std::size_t>(n) * 3 * width &&
                 a.fc.size() == static_cast<std::size_t>(n) * hidden,
             "block_forward: activations are not sized for this batch and shard; call resize()");

  layernorm_forward(x, w.ln1_gain, w.ln1_bias, n, c, a.ln1.data(), a.ln1_mean.data(),
                    a.ln1_rstd.data());
  //! [tensor_parallel_attention]
  // Column-parallel: this shard's columns of W_qkv, one block each for q, k and v.
  for (int part = 0; part < 3; ++part) {
    const int col = part * c + s.head_begin * hs;
    linear_forward(a.ln1.data(), n, c, w.w_qkv + col, 3 * c, w.b_qkv + col, width,
                   a.qkv.data() + part * width, 3 * width);
  }
  attention_forward(a.qkv.data(), batch, seq_len, heads, hs, a.att.data(), a.att_out.data());
  // Row-parallel: this shard's rows of W_out; the bias is added once, by the shard owning head 0.
  std::vector<T> partial(static_cast<std::size_t>(n) * c);
  linear_forward(a.att_out.data(), n, width,
                 w.w_out + static_cast<std::size_t>(s.head_begin) * hs * c, c,
                 s.head_begin == 0 ? w.b_out : nullptr, c, partial.data(), c);
  if (reduce) reduce(partial.data(), partial.size());
  //! [tensor_parallel_attention]
  for (std::size_t i = 0; i < partial.size(); ++i) a.residual[i] = x[i] + partial[i];

  layernorm_forward(a.residual.data(), w.ln2_gain, w.ln2_bias, n, c, a.ln2.data(),
                    a.ln2_mean.data(), a.ln2_rstd.data());
  linear_forward(a.ln2.data(), n, c, w.w_fc + s.hidden_begin, f, w.b_fc + s.hidden_begin, hidden,
                 a.fc.data(), hidden);
  gelu_forward(a.fc.data(), a.fc.size(), a.fc_gelu.data());
  linear_forward(a.fc_gelu.data(), n, hidden,
                 w.w_proj + static_cast<std::size_t>(s.hidden_begin) * c, c,
                 s.hidden_begin == 0 ? w.b_proj : nullptr, c, partial.data(), c);
  if (reduce) reduce(partial.data(), partial.size());
  for (std::size_t i = 0; i < partial.size(); ++i) y[i] = a.residual[i] + partial[i];
}

template <typename T>
void block_backward(const Config& config, const BlockTensors<T>& w, const BlockTensors<T>& g,
                    const Shard& shard, int batch, int seq_len, const T* x, const T* dy, T* dx,
                    BlockActivations<T>& a, const AllReduce<T>& reduce) {
  const Shard s = shard.resolved(config);
  const int n = batch * seq_len, c = config.d_model, hs = config.head_size(), f = config.d_ff();
  const int heads = s.head_end - s.head_begin, width = heads * hs;
  const int hidden = s.hidden_end - s.hidden_begin;
  const std::size_t nc = static_cast<std::size_t>(n) * c;

  // y = r + MLP(LN2(r)): dr = dy (the residual path) + the MLP path's contribution.
  std::vector<T> d_residual(dy, dy + nc);
  std::vector<T> d_gelu(static_cast<std::size_t>(n) * hidden, T(0)), d_fc(d_gelu.size(), T(0));
  linear_backward(dy, c, a.fc_gelu.data(), n, hidden,
                  w.w_proj + static_cast<std::size_t>(s.hidden_begin) * c, c, c, d_gelu.data(),
                  g.w_proj + static_cast<std::size_t>(s.hidden_begin) * c,
                  s.hidden_begin == 0 ? g.b_proj : nullptr);
  gelu_backward(d_gelu.data(), a.fc.data(), d_gelu.size(), d_fc.data());
  std::vector<T> d_ln(nc, T(0));
  linear_backward(d_fc.data(), hidden, a.ln2.data(), n, c, w.w_fc + s.hidden_begin, f, hidden,
                  d_ln.data(), g.w_fc + s.hidden_begin, g.b_fc + s.hidden_begin);
  if (reduce) reduce(d_ln.data(), d_ln.size());  // LN2's output fed every shard
  layernorm_backward(d_ln.data(), a.residual.data(), w.ln2_gain, a.ln2_mean.data(),
                     a.ln2_rstd.data(), n, c, d_residual.data(), g.ln2_gain, g.ln2_bias);

  // r = x + Attn(LN1(x)).
  std::vector<T> d_att_out(static_cast<std::size_t>(n) * width, T(0));
  linear_backward(d_residual.data(), c, a.att_out.data(), n, width,
                  w.w_out + static_cast<std::size_t>(s.head_begin) * hs * c, c, c, d_att_out.data(),
                  g.w_out + static_cast<std::size_t>(s.head_begin) * hs * c,
                  s.head_begin == 0 ? g.b_out : nullptr);
  std::vector<T> d_qkv(a.qkv.size());
  attention_backward(d_att_out.data(), a.qkv.data(), a.att.data(), batch, seq_len, heads, hs,
                     d_qkv.data());
  std::fill(d_ln.begin(), d_ln.end(), T(0));
  for (int part = 0; part < 3; ++part) {
    const int col = part * c + s.head_begin * hs;
    linear_backward(d_qkv.data() + part * width, 3 * width, a.ln1.data(), n, c, w.w_qkv + col,
                    3 * c, width, d_ln.data(), g.w_qkv + col, g.b_qkv + col);
  }
  if (reduce) reduce(d_ln.data(), d_ln.size());
  std::copy(d_residual.begin(), d_residual.end(), dx);
  layernorm_backward(d_ln.data(), x, w.ln1_gain, a.ln1_mean.data(), a.ln1_rstd.data(), n, c, dx,
                     g.ln1_gain, g.ln1_bias);
}

template struct BlockActivations<float>;
template struct BlockActivations<double>;
template void block_forward<float>(const Config&, const BlockTensors<float>&, const Shard&, int,
                                   int, const float*, float*, BlockActivations<float>&,
                                   const AllReduce<float>&);
template void block_forward<double>(const Config&, const BlockTensors<double>&, const Shard&, int,
                                    int, const double*, double*, BlockActivations<double>&,
                                    const AllReduce<double>&);
template void block_backward<float>(const Config&, const BlockTensors<float>&,
                                    const BlockTensors<float>&, const Shard&, int, int,
                                    const float*, const float*, float*, BlockActivations<float>&,
                                    const AllReduce<float>&);
template void block_backward<double>(const Config&, const BlockTensors<double>&,
                                     const BlockTensors<double>&, const Shard&, int, int,
                                     const double*, const double*, double*,
                                     BlockActivations<double>&, const AllReduce<double>&);

}  // namespace book::train
