// Exercise train.layernorm_backward, the reference solution.
#include "chapters/04_training_baseline/layers.h"

namespace book::train {

// With x̂ = (x - mean) · rstd and y = x̂ · gain + bias, per row:
//   dbias += dy,  dgain += dy · x̂,  and with g = dy · gain (the gradient reaching x̂),
//   dx = rstd · (g - mean(g) - x̂ · mean(g · x̂)).
// The two means are what the normalisation's dependence on every element of the row costs.
template <typename T>
void layernorm_backward(const T* dout, const T* x, const T* gain, const T* mean, const T* rstd,
                        int rows, int channels, T* dx, T* dgain, T* dbias) {
  for (int i = 0; i < rows; ++i) {
    const std::size_t base = static_cast<std::size_t>(i) * channels;
    const T m = mean[i], r = rstd[i];
    T mean_g = 0, mean_gx = 0;
    for (int c = 0; c < channels; ++c) {
      const T xhat = (x[base + c] - m) * r;
      const T g = dout[base + c] * gain[c];
      mean_g += g;
      mean_gx += g * xhat;
      dgain[c] += dout[base + c] * xhat;
      dbias[c] += dout[base + c];
    }
    mean_g /= channels;
    mean_gx /= channels;
    for (int c = 0; c < channels; ++c) {
      const T xhat = (x[base + c] - m) * r;
      dx[base + c] += r * (dout[base + c] * gain[c] - mean_g - xhat * mean_gx);
    }
  }
}

template void layernorm_backward<float>(const float*, const float*, const float*, const float*,
                                        const float*, int, int, float*, float*, float*);
template void layernorm_backward<double>(const double*, const double*, const double*, const double*,
                                         const double*, int, int, double*, double*, double*);

}  // namespace book::train
