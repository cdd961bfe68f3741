// The layers that are not exercises: embedding, linear, GELU, cross-entropy, and the forward
// passes of LayerNorm and attention (their backward passes are the exercises, in solutions/).
// Each splits its work over the step's threads (threads.h) so that every output element is
// computed by one thread exactly as on one: rows for the row-wise layers, (sequence, head) pairs
// for attention, and columns for the sums over rows (the bias and embedding gradients).
#include "chapters/04_training_baseline/layers.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "chapters/01_gemm_cpu/sgemm.h"
#include "chapters/04_training_baseline/profile.h"
#include "chapters/04_training_baseline/threads.h"

namespace book::train {

//! [split_matmul]
// The step's products are tall and thin (rows = sequences × tokens, 1408 at 128 sequences, by 64
// to 256 columns, or the transpose for the weight gradients): too small for sgemm to split well
// over two cores, where the threads share one packed block of A and meet at a barrier for every
// block. So the step splits C itself along its longer side, one range of rows (or columns) per
// thread, and each thread runs sgemm alone on its range (one level of threads: inside a
// parallel_for range sgemm stays on its thread). No thread waits for another until the end, and
// every element of C is still one sum over k in sgemm's order, so the bits do not depend on the
// thread count.
template <>
void matmul<float>(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a,
                   int lda, const float* b, int ldb, float beta, float* c, int ldc) {
  using book::gemm::Transpose;
  const Transpose ta = trans_a ? Transpose::kYes : Transpose::kNo;
  const Transpose tb = trans_b ? Transpose::kYes : Transpose::kNo;
  if (m <= 0 || n <= 0 || k <= 0) {  // nothing to split; sgemm's own checks and rules apply
    book::gemm::sgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    return;
  }
  const auto rows = static_cast<std::size_t>(m), cols = static_cast<std::size_t>(n);
  const auto depth = static_cast<std::size_t>(k);
  if (rows >= cols) {
    parallel_for(rows, grain_for(cols * depth), [&](std::size_t first, std::size_t last) {
      // Rows [first, last) of op(A): rows of A as stored, or its columns when A is transposed.
      const float* a_part = trans_a ? a + first : a + first * lda;
      book::gemm::sgemm(ta, tb, static_cast<int>(last - first), n, k, alpha, a_part, lda, b, ldb,
                        beta, c + first * ldc, ldc);
    });
  } else {
    parallel_for(cols, grain_for(rows * depth), [&](std::size_t first, std::size_t last) {
      // Columns [first, last) of op(B): columns of B as stored, or its rows when B is transposed.
      const float* b_part = trans_b ? b + first * ldb : b + first;
      book::gemm::sgemm(ta, tb, m, static_cast<int>(last - first), k, alpha, a, lda, b_part, ldb,
                        beta, c + first, ldc);
    });
  }
}
//! [split_matmul]

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
  const LayerScope scope("embedding forward");
  const std::size_t rows = static_cast<std::size_t>(batch) * seq_len;
  parallel_for(rows, grain_for(2 * channels), [&](std::size_t first, std::size_t last) {
    for (std::size_t row = first; row < last; ++row) {
      const T* token_row = wte + static_cast<std::size_t>(tokens[row]) * channels;
      const T* position_row = wpe + (row % seq_len) * channels;
      T* o = out + row * channels;
      for (int c = 0; c < channels; ++c) o[c] = token_row[c] + position_row[c];
    }
  });
}

template <typename T>
void embedding_backward(const int* tokens, int batch, int seq_len, const T* dout, int channels,
                        T* dwte, T* dwpe) {
  const LayerScope scope("embedding backward");
  // A token's row sums over every position it appears at: split the columns, not the positions.
  // Every thread walks all the rows, whatever its columns, so a range narrower than a few vectors
  // saves nothing: at least kMinColumns each (the book's model, 64 channels, stays on one thread).
  constexpr std::size_t kMinColumns = 64;
  const std::size_t rows = static_cast<std::size_t>(batch) * seq_len;
  const std::size_t grain = std::max(grain_for(2 * rows), kMinColumns);
  parallel_for(channels, grain, [&](std::size_t c0, std::size_t c1) {
    for (std::size_t row = 0; row < rows; ++row) {
      const T* d = dout + row * channels;
      T* token_row = dwte + static_cast<std::size_t>(tokens[row]) * channels;
      T* position_row = dwpe + (row % seq_len) * channels;
      for (std::size_t c = c0; c < c1; ++c) {
        token_row[c] += d[c];
        position_row[c] += d[c];
      }
    }
  });
}

namespace {

// Rows [first, last) of layernorm_forward.
template <typename T>
void layernorm_forward_rows(const T* x, const T* gain, const T* bias, std::size_t first,
                            std::size_t last, int channels, T* out, T* mean, T* rstd) {
  for (std::size_t i = first; i < last; ++i) {
    const T* xi = x + i * channels;
    T m = 0;
    for (int c = 0; c < channels; ++c) m += xi[c];
    m /= channels;
    T var = 0;  // two passes: x - mean first, so a large mean does not cancel the variance away
    for (int c = 0; c < channels; ++c) var += (xi[c] - m) * (xi[c] - m);
    var /= channels;
    const T r = T(1) / std::sqrt(var + T(1e-5));
    T* oi = out + i * channels;
    for (int c = 0; c < channels; ++c) oi[c] = (xi[c] - m) * r * gain[c] + bias[c];
    mean[i] = m;
    rstd[i] = r;
  }
}

}  // namespace

template <typename T>
void layernorm_forward(const T* x, const T* gain, const T* bias, int rows, int channels, T* out,
                       T* mean, T* rstd) {
  const LayerScope scope("LayerNorm forward");
  parallel_for(rows, grain_for(4 * channels), [&](std::size_t first, std::size_t last) {
    layernorm_forward_rows(x, gain, bias, first, last, channels, out, mean, rstd);
  });
}

template <typename T>
void linear_forward(const T* x, int rows, int in, const T* w, int ldw, const T* bias, int out, T* y,
                    int ldy) {
  const LayerScope scope("linear forward (GEMM, bias)");
  parallel_for(rows, grain_for(out), [&](std::size_t first, std::size_t last) {
    for (std::size_t i = first; i < last; ++i)
      for (int j = 0; j < out; ++j) y[i * ldy + j] = bias ? bias[j] : T(0);
  });
  matmul<T>(false, false, rows, out, in, T(1), x, in, w, ldw, T(1), y, ldy);
}

template <typename T>
void linear_backward(const T* dy, int ldy, const T* x, int rows, int in, const T* w, int ldw,
                     int out, T* dx, T* dw, T* dbias) {
  const LayerScope scope("linear backward (GEMMs, bias)");
  if (dx) matmul<T>(false, true, rows, in, out, T(1), dy, ldy, w, ldw, T(1), dx, in);
  if (dw) matmul<T>(true, false, in, out, rows, T(1), x, in, dy, ldy, T(1), dw, ldw);
  if (!dbias) return;
  // The bias gradient sums over rows: each thread takes whole columns, summed in row order.
  parallel_for(out, grain_for(rows), [&](std::size_t j0, std::size_t j1) {
    for (int i = 0; i < rows; ++i)
      for (std::size_t j = j0; j < j1; ++j) dbias[j] += dy[static_cast<std::size_t>(i) * ldy + j];
  });
}

namespace {
constexpr double kGeluScale = 0.7978845608028654;  // sqrt(2/pi)

// tanh(u) = 1 - 2 / (exp(2u) + 1), from exp(2u): libm's exp is cheaper than its tanh, and the GELU
// runs on every hidden unit of every token (the README's MFU section has the profile and the
// timings). The absolute error stays within a few ulps of 1, which is all GELU's 1 + tanh needs;
// at ±large u, exp gives inf or 0 and the result ±1.
template <typename T>
T tanh_from_exp(T exp_2u) {
  return T(1) - T(2) / (exp_2u + T(1));
}
}  // namespace

// GELU kChunk elements at a time: libm's exp one element at a time, the arithmetic around it in
// loops of their own over a fixed count that the compiler vectorises even at -O2 (every element
// still goes through exactly the operations of the formula, in its order, so the results are
// those of a one-element-at-a-time loop, bit for bit). Not -O3 for this file: there GCC also
// vectorises the sums of LayerNorm and attention "in order" but rounds each product on its own,
// where the scalar loop fuses it into the sum (an FMA), which changes the results. An element is
// an exp and a division, a few tens of cycles: worth about kGeluWork floats touched in
// parallel_for's units.
constexpr std::size_t kChunk = 256;
constexpr std::size_t kGeluWork = 16;

template <typename T>
void gelu_forward_chunk(const T* __restrict x, T* __restrict y) {
  T e[kChunk];
  for (std::size_t j = 0; j < kChunk; ++j)
    e[j] = T(2) * (T(kGeluScale) * (x[j] + T(0.044715) * x[j] * x[j] * x[j]));
  for (std::size_t j = 0; j < kChunk; ++j) e[j] = std::exp(e[j]);
  for (std::size_t j = 0; j < kChunk; ++j) y[j] = T(0.5) * x[j] * (T(1) + tanh_from_exp(e[j]));
}

template <typename T>
void gelu_backward_chunk(const T* __restrict dy, const T* __restrict x, T* __restrict dx) {
  T e[kChunk];
  for (std::size_t j = 0; j < kChunk; ++j)
    e[j] = T(2) * (T(kGeluScale) * (x[j] + T(0.044715) * x[j] * x[j] * x[j]));
  for (std::size_t j = 0; j < kChunk; ++j) e[j] = std::exp(e[j]);
  for (std::size_t j = 0; j < kChunk; ++j) {
    const T v = x[j], th = tanh_from_exp(e[j]);
    const T du = T(kGeluScale) * (T(1) + T(3 * 0.044715) * v * v);
    dx[j] += dy[j] * (T(0.5) * (T(1) + th) + T(0.5) * v * (T(1) - th * th) * du);
  }
}

// Whole chunks in place; the last, partial one through zero-padded copies.
template <typename T>
void gelu_forward_range(const T* x, std::size_t n, T* y) {
  std::size_t i = 0;
  for (; i + kChunk <= n; i += kChunk) gelu_forward_chunk(x + i, y + i);
  if (i == n) return;
  T x_tail[kChunk] = {}, y_tail[kChunk];
  std::copy(x + i, x + n, x_tail);
  gelu_forward_chunk(x_tail, y_tail);
  std::copy(y_tail, y_tail + (n - i), y + i);
}

template <typename T>
void gelu_backward_range(const T* dy, const T* x, std::size_t n, T* dx) {
  std::size_t i = 0;
  for (; i + kChunk <= n; i += kChunk) gelu_backward_chunk(dy + i, x + i, dx + i);
  if (i == n) return;
  T dy_tail[kChunk] = {}, x_tail[kChunk] = {}, dx_tail[kChunk] = {};
  std::copy(dy + i, dy + n, dy_tail);
  std::copy(x + i, x + n, x_tail);
  std::copy(dx + i, dx + n, dx_tail);
  gelu_backward_chunk(dy_tail, x_tail, dx_tail);
  std::copy(dx_tail, dx_tail + (n - i), dx + i);
}

template <typename T>
void gelu_forward(const T* x, std::size_t n, T* y) {
  const LayerScope scope("GELU forward");
  parallel_for(n, grain_for(kGeluWork), [&](std::size_t first, std::size_t last) {
    gelu_forward_range(x + first, last - first, y + first);
  });
}

template <typename T>
void gelu_backward(const T* dy, const T* x, std::size_t n, T* dx) {
  const LayerScope scope("GELU backward");
  parallel_for(n, grain_for(kGeluWork), [&](std::size_t first, std::size_t last) {
    gelu_backward_range(dy + first, x + first, last - first, dx + first);
  });
}

template <typename T>
void attention_forward(const T* qkv, int batch, int seq_len, int n_head, int head_size, T* att,
                       T* out) {
  const LayerScope scope("attention forward");
  const int width = n_head * head_size, row = 3 * width;
  const T scale = T(1) / std::sqrt(T(head_size));
  // Each (sequence, head) pair is independent: its scores, softmax and output.
  const std::size_t pairs = static_cast<std::size_t>(batch) * n_head;
  const std::size_t work = static_cast<std::size_t>(seq_len) * seq_len * head_size;
  parallel_for(pairs, grain_for(work), [&](std::size_t first, std::size_t last) {
    for (std::size_t pair = first; pair < last; ++pair) {
      const int b = static_cast<int>(pair / n_head), h = static_cast<int>(pair % n_head);
      for (int t = 0; t < seq_len; ++t) {
        const T* q = qkv + (static_cast<std::size_t>(b) * seq_len + t) * row + h * head_size;
        T* p = att + ((static_cast<std::size_t>(b) * n_head + h) * seq_len + t) * seq_len;
        // Causal: position t sees positions 0..t. Four keys at a time, each dot product summed
        // in its own order: four independent chains of FMAs keep the FMA units busy where one
        // chain would wait on each addition's latency.
        const T* keys = qkv + static_cast<std::size_t>(b) * seq_len * row + width + h * head_size;
        int s = 0;
        for (; s + 4 <= t + 1; s += 4) {
          const T *k0 = keys + s * row, *k1 = k0 + row, *k2 = k1 + row, *k3 = k2 + row;
          T dot0 = 0, dot1 = 0, dot2 = 0, dot3 = 0;
          for (int d = 0; d < head_size; ++d) {
            dot0 += q[d] * k0[d];
            dot1 += q[d] * k1[d];
            dot2 += q[d] * k2[d];
            dot3 += q[d] * k3[d];
          }
          p[s] = dot0 * scale;
          p[s + 1] = dot1 * scale;
          p[s + 2] = dot2 * scale;
          p[s + 3] = dot3 * scale;
        }
        for (; s <= t; ++s) {
          const T* k = keys + s * row;
          T dot = 0;
          for (int d = 0; d < head_size; ++d) dot += q[d] * k[d];
          p[s] = dot * scale;
        }
        T max_score = -std::numeric_limits<T>::infinity();
        for (s = 0; s <= t; ++s) max_score = std::max(max_score, p[s]);
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
  });
}

template <typename T>
T cross_entropy_forward(const T* logits, const int* targets, int rows, int vocab, T* probs) {
  const LayerScope scope("cross-entropy forward");
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
  const LayerScope scope("cross-entropy backward");
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
