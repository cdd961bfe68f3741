#include "chapters/04_training_baseline/layers.h"
#include "common/check.h"

namespace book::train {

template <typename T>
void attention_backward(const T* dout, const T* qkv, const T* att, int batch, int seq_len,
                        int n_head, int head_size, T* dqkv) {
  (void)dout, (void)qkv, (void)att, (void)batch, (void)seq_len, (void)n_head, (void)head_size;
  (void)dqkv;
  BOOK_NOT_IMPLEMENTED("train.attention_backward",
                       "exercises/04_training_baseline/attention_backward.cc",
                       "chapters/04_training_baseline/README.md, section Attention backward");
}

// Both instantiations are needed: training uses float, the finite-difference tests double.
template void attention_backward<float>(const float*, const float*, const float*, int, int, int,
                                        int, float*);
template void attention_backward<double>(const double*, const double*, const double*, int, int, int,
                                         int, double*);

}  // namespace book::train
