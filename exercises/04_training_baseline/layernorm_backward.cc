#include "chapters/04_training_baseline/layers.h"
#include "common/check.h"

namespace book::train {

template <typename T>
void layernorm_backward(const T* dout, const T* x, const T* gain, const T* mean, const T* rstd,
                        int rows, int channels, T* dx, T* dgain, T* dbias) {
  (void)dout, (void)x, (void)gain, (void)mean, (void)rstd, (void)rows, (void)channels;
  (void)dx, (void)dgain, (void)dbias;
  BOOK_NOT_IMPLEMENTED("train.layernorm_backward",
                       "exercises/04_training_baseline/layernorm_backward.cc",
                       "chapters/04_training_baseline/README.md, section LayerNorm backward");
}

// Both instantiations are needed: training uses float, the finite-difference tests double.
template void layernorm_backward<float>(const float*, const float*, const float*, const float*,
                                        const float*, int, int, float*, float*, float*);
template void layernorm_backward<double>(const double*, const double*, const double*, const double*,
                                         const double*, int, int, double*, double*, double*);

}  // namespace book::train
