#include "chapters/04_training_baseline/step.h"

namespace book::train {

//! [forward_backward]
template <typename T>
T forward_backward(Model<T>& model, const int* tokens, const int* targets, int batch, int seq_len,
                   T loss_scale, const GradientReadyHook& ready) {
  const T loss = model.forward(tokens, targets, batch, seq_len);
  model.backward(loss_scale, ready);
  return loss;
}
//! [forward_backward]

template float forward_backward<float>(Model<float>&, const int*, const int*, int, int, float,
                                       const GradientReadyHook&);
template double forward_backward<double>(Model<double>&, const int*, const int*, int, int, double,
                                         const GradientReadyHook&);

}  // namespace book::train
