// The one-device seam: chapter 4's layers on whole tensors.
#include "chapters/04_training_baseline/tensor_parallelism.h"

#include "chapters/04_training_baseline/layers.h"
#include "chapters/04_training_baseline/profile.h"

namespace book::train {

template <typename T>
const T* OneDevice<T>::norm_forward(const T* x, const T* gain, const T* bias, int rows,
                                    int channels, T* out, T* mean, T* rstd) {
  layernorm_forward(x, gain, bias, rows, channels, out, mean, rstd);
  return out;
}

template <typename T>
void OneDevice<T>::norm_backward(const T* d_whole, const T* x, const T* gain, const T* mean,
                                 const T* rstd, int rows, int channels, T* dx, T* dgain, T* dbias) {
  const LayerScope scope("LayerNorm backward");
  layernorm_backward(d_whole, x, gain, mean, rstd, rows, channels, dx, dgain, dbias);
}

template <typename T>
void OneDevice<T>::column_forward(const ProjectionWeights<T>& p, const T* x, int rows, T* y) {
  linear_forward(x, rows, p.in, p.w, p.out, p.bias, p.out, y, p.out);
}

template <typename T>
void OneDevice<T>::column_backward(const ProjectionWeights<T>& p, const ProjectionGrads<T>& g,
                                   const T* x, const T* dy, int rows, T* dx) {
  if (p.which != Projection::kQkv) {
    linear_backward(dy, p.out, x, rows, p.in, p.w, p.out, p.out, dx, g.w, g.bias);
    return;
  }
  // dLN1 sums q's, k's and v's contributions one after another (as three products, so each
  // element's sum keeps that order); the weight and bias gradients of all three are one product.
  const int width = p.out / 3;
  for (int part = 0; part < 3; ++part)
    linear_backward(dy + part * width, p.out, x, rows, p.in, p.w + part * width, p.out, width, dx,
                    static_cast<T*>(nullptr), static_cast<T*>(nullptr));
  linear_backward(dy, p.out, x, rows, p.in, p.w, p.out, p.out, static_cast<T*>(nullptr), g.w,
                  g.bias);
}

// On one device a row-parallel projection is the whole projection, as a column-parallel one is.
template <typename T>
void OneDevice<T>::row_forward(const ProjectionWeights<T>& p, const T* x, int rows, T* y) {
  column_forward(p, x, rows, y);
}

template <typename T>
void OneDevice<T>::row_backward(const ProjectionWeights<T>& p, const ProjectionGrads<T>& g,
                                const T* x, const T* dy, int rows, T* dx) {
  column_backward(p, g, x, dy, rows, dx);
}

template <typename T>
void OneDevice<T>::embedding_forward(const int* tokens, int batch, int seq_len, const T* wte, int,
                                     int, const T* wpe, int channels, T* out) {
  train::embedding_forward(tokens, batch, seq_len, wte, wpe, channels, out);
}

template <typename T>
void OneDevice<T>::embedding_backward(const int* tokens, int batch, int seq_len, int, int,
                                      const T* d_out, int channels, T* dwte, T* dwpe) {
  train::embedding_backward(tokens, batch, seq_len, d_out, channels, dwte, dwpe);
}

template <typename T>
T OneDevice<T>::cross_entropy_forward(const T* logits, const int* targets, int rows, int,
                                      int vocab_rows, T* probs) {
  return train::cross_entropy_forward(logits, targets, rows, vocab_rows, probs);
}

template <typename T>
void OneDevice<T>::cross_entropy_backward(const T* probs, const int* targets, int rows, int,
                                          int vocab_rows, T scale, T* dlogits) {
  train::cross_entropy_backward(probs, targets, rows, vocab_rows, scale, dlogits);
}

template <typename T>
OneDevice<T>& one_device() {
  static OneDevice<T> seam;
  return seam;
}

template class OneDevice<float>;
template class OneDevice<double>;
template OneDevice<float>& one_device<float>();
template OneDevice<double>& one_device<double>();

}  // namespace book::train
