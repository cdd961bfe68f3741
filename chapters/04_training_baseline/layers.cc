// The layers that are not exercises: embedding, linear, GELU, cross-entropy, and the forward
// passes of LayerNorm and attention (their backward passes are the exercises, in solutions/).
#include "chapters/04_training_baseline/layers.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "chapters/01_gemm_cpu/sgemm.h"

namespace book::train {

template <>
void matmul<float>(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a,
                   int lda, const float* b, int ldb, float beta, float* c, int ldc) {
  using book::gemm::Transpose;
  book::gemm::sgemm(trans_a ? Transpose::kYes : Transpose::kNo,
                    trans_b ? Transpose::kYes : Transpose::kNo, m, n, k, alpha, a, lda, b, ldb,
                    beta, c, ldc);
}

template <>
void matmul<double>(bool trans_a, bool trans_b, int m, int n, int k, double alpha, const double* a,
                    int lda, const double* b, int ldb, double beta, double* c, int ldc) {
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double sum = 0;
      for (int p = 0; p < k; ++p)
        sum += (trans_a ? a[p * lda + i] : a[i * lda + p]) *
               (trans_b ? b[j * ldb + p] : b[p * ldb + j]);
      double& out = c[i * ldc + j];
      out = beta == 0 ? alpha * sum : alpha * sum + beta * out;
    }
}

template <typename T>
void embedding_forward(const int* tokens, int batch, int seq_len, const T* wte, const T* wpe,
                       int channels, T* out) {
  for (int b = 0; b < batch; ++b)
    for (int t = 0; t < seq_len; ++t) {
      const T* token_row = wte + static_cast<std::size_t>(tokens[b * seq_len + t]) * channels;
      const T* position_row = wpe + static_cast<std::size_t>(t) * channels;
      T* o = out + (static_cast<std::size_t>(b) * seq_len + t) * channels;
      for (int c = 0; c < channels; ++c) o[c] = token_row[c] + position_row[c];
    }
}

template <typename T>
void embedding_backward(const int* tokens, int batch, int seq_len, const T* dout, int channels,
                        T* dwte, T* dwpe) {
  for (int b = 0; b < batch; ++b)
    for (int t = 0; t < seq_len; ++t) {
      const T* d = dout + (static_cast<std::size_t>(b) * seq_len + t) * channels;
      T* token_row = dwte + static_cast<std::size_t>(tokens[b * seq_len + t]) * channels;
      T* position_row = dwpe + static_cast<std::size_t>(t) * channels;
      for (int c = 0; c < channels; ++c) {
        token_row[c] += d[c];
        position_row[c] += d[c];
      }
    }
}

template <typename T>
void layernorm_forward(const T* x, const T* gain, const T* bias, int rows, int channels, T* out,
                       T* mean, T* rstd) {
  for (int i = 0; i < rows; ++i) {
    const T* xi = x + static_cast<std::size_t>(i) * channels;
    T m = 0;
    for (int c = 0; c < channels; ++c) m += xi[c];
    m /= channels;
    T var = 0;  // two passes: x - mean first, so a large mean does not cancel the variance away
    for (int c = 0; c < channels; ++c) var += (xi[c] - m) * (xi[c] - m);
    var /= channels;
    const T r = T(1) / std::sqrt(var + T(1e-5));
    T* oi = out + static_cast<std::size_t>(i) * channels;
    for (int c = 0; c < channels; ++c) oi[c] = (xi[c] - m) * r * gain[c] + bias[c];
    mean[i] = m;
    rstd[i] = r;
  }
}

template <typename T>
void linear_forward(const T* x, int rows, int in, const T* w, int ldw, const T* bias, int out, T* y,
                    int ldy) {
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < out; ++j) y[static_cast<std::size_t>(i) * ldy + j] = bias ? bias[j] : T(0);
  matmul<T>(false, false, rows, out, in, T(1), x, in, w, ldw, T(1), y, ldy);
}

template <typename T>
void linear_backward(const T* dy, int ldy, const T* x, int rows, int in, const T* w, int ldw,
                     int out, T* dx, T* dw, T* dbias) {
  if (dx) matmul<T>(false, true, rows, in, out, T(1), dy, ldy, w, ldw, T(1), dx, in);
  matmul<T>(true, false, in, out, rows, T(1), x, in, dy, ldy, T(1), dw, ldw);
  if (dbias)
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < out; ++j) dbias[j] += dy[static_cast<std::size_t>(i) * ldy + j];
}

namespace {
constexpr double kGeluScale = 0.7978845608028654;  // sqrt(2/pi)

// tanh(u) = 1 - 2 / (exp(2u) + 1): libm's exp is cheaper than its tanh, and the GELU runs on
// every hidden unit of every token (the README's MFU section has the profile and the timings). The
// absolute error stays within a few ulps of 1, which is all GELU's 1 + tanh needs; at ±large u, exp
// gives inf or 0 and the result ±1.
template <typename T>
T tanh_via_exp(T u) {
  return T(1) - T(2) / (std::exp(T(2) * u) + T(1));
}
}  // namespace

template <typename T>
void gelu_forward(const T* x, std::size_t n, T* y) {
  for (std::size_t i = 0; i < n; ++i) {
    const T u = T(kGeluScale) * (x[i] + T(0.044715) * x[i] * x[i] * x[i]);
    y[i] = T(0.5) * x[i] * (T(1) + tanh_via_exp(u));
  }
}

template <typename T>
void gelu_backward(const T* dy, const T* x, std::size_t n, T* dx) {
  for (std::size_t i = 0; i < n; ++i) {
    const T v = x[i];
    const T u = T(kGeluScale) * (v + T(0.044715) * v * v * v);
    const T th = tanh_via_exp(u);
    const T du = T(kGeluScale) * (T(1) + T(3 * 0.044715) * v * v);
    dx[i] += dy[i] * (T(0.5) * (T(1) + th) + T(0.5) * v * (T(1) - th * th) * du);
  }
}

template <typename T>
void attention_forward(const T* qkv, int batch, int seq_len, int n_head, int head_size, T* att,
                       T* out) {
  const int width = n_head * head_size, row = 3 * width;
  const T scale = T(1) / std::sqrt(T(head_size));
  for (int b = 0; b < batch; ++b)
    for (int h = 0; h < n_head; ++h)
      for (int t = 0; t < seq_len; ++t) {
        const T* q = qkv + (static_cast<std::size_t>(b) * seq_len + t) * row + h * head_size;
        T* p = att + ((static_cast<std::size_t>(b) * n_head + h) * seq_len + t) * seq_len;
        T max_score = -std::numeric_limits<T>::infinity();
        for (int s = 0; s <= t; ++s) {  // causal: position t sees positions 0..t
          const T* k =
              qkv + (static_cast<std::size_t>(b) * seq_len + s) * row + width + h * head_size;
          T dot = 0;
          for (int d = 0; d < head_size; ++d) dot += q[d] * k[d];
          p[s] = dot * scale;
          max_score = std::max(max_score, p[s]);
        }
        T sum = 0;  // subtracting the max keeps exp() finite; the softmax is unchanged
        for (int s = 0; s <= t; ++s) sum += (p[s] = std::exp(p[s] - max_score));
        for (int s = 0; s <= t; ++s) p[s] /= sum;
        for (int s = t + 1; s < seq_len; ++s) p[s] = 0;
        T* o = out + (static_cast<std::size_t>(b) * seq_len + t) * width + h * head_size;
        for (int d = 0; d < head_size; ++d) o[d] = 0;
        for (int s = 0; s <= t; ++s) {
          const T* v =
              qkv + (static_cast<std::size_t>(b) * seq_len + s) * row + 2 * width + h * head_size;
          for (int d = 0; d < head_size; ++d) o[d] += p[s] * v[d];
        }
      }
}

template <typename T>
T cross_entropy_forward(const T* logits, const int* targets, int rows, int vocab, T* probs) {
  T total = 0;
  int counted = 0;
  for (int i = 0; i < rows; ++i) {
    const T* z = logits + static_cast<std::size_t>(i) * vocab;
    T* p = probs + static_cast<std::size_t>(i) * vocab;
    const T max_logit = *std::max_element(z, z + vocab);
    T sum = 0;
    for (int v = 0; v < vocab; ++v) sum += (p[v] = std::exp(z[v] - max_logit));
    for (int v = 0; v < vocab; ++v) p[v] /= sum;
    if (targets[i] < 0) continue;
    // -log softmax computed from the logits (not log(p)) so a tiny probability stays finite.
    total += std::log(sum) - (z[targets[i]] - max_logit);
    ++counted;
  }
  return counted ? total / counted : T(0);
}

template <typename T>
void cross_entropy_backward(const T* probs, const int* targets, int rows, int vocab, T scale,
                            T* dlogits) {
  int counted = 0;
  for (int i = 0; i < rows; ++i) counted += targets[i] >= 0;
  const T factor = counted ? scale / counted : T(0);
  for (int i = 0; i < rows; ++i) {
    const T* p = probs + static_cast<std::size_t>(i) * vocab;
    T* d = dlogits + static_cast<std::size_t>(i) * vocab;
    if (targets[i] < 0) {
      std::fill(d, d + vocab, T(0));
      continue;
    }
    for (int v = 0; v < vocab; ++v) d[v] = factor * (p[v] - (v == targets[i] ? T(1) : T(0)));
  }
}

#define BOOK_TRAIN_INSTANTIATE(T)                                                                 \
  template void embedding_forward<T>(const int*, int, int, const T*, const T*, int, T*);          \
  template void embedding_backward<T>(const int*, int, int, const T*, int, T*, T*);               \
  template void layernorm_forward<T>(const T*, const T*, const T*, int, int, T*, T*, T*);         \
  template void linear_forward<T>(const T*, int, int, const T*, int, const T*, int, T*, int);     \
  template void linear_backward<T>(const T*, int, const T*, int, int, const T*, int, int, T*, T*, \
                                   T*);                                                           \
  template void gelu_forward<T>(const T*, std::size_t, T*);                                       \
  template void gelu_backward<T>(const T*, const T*, std::size_t, T*);                            \
  template void attention_forward<T>(const T*, int, int, int, int, T*, T*);                       \
  template T cross_entropy_forward<T>(const T*, const int*, int, int, T*);                        \
  template void cross_entropy_backward<T>(const T*, const int*, int, int, T, T*);

BOOK_TRAIN_INSTANTIATE(float)
BOOK_TRAIN_INSTANTIATE(double)

}  // namespace book::train
