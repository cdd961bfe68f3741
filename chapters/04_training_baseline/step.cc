#include "chapters/04_training_baseline/step.h"

#include "common/check.h"

namespace book::train {

//! [forward_backward]
template <typename T>
T forward_backward(Model<T>& model, const Batch& batch, T loss_scale, Activations<T>& acts,
                   const GradientReadyHook& ready) {
  BOOK_CHECK(batch.tokens.size() == static_cast<std::size_t>(batch.batch) * batch.seq_len &&
                 batch.targets.size() == batch.tokens.size(),
             "forward_backward: a batch of " << batch.batch << " × " << batch.seq_len << " has "
                                             << batch.tokens.size() << " tokens and "
                                             << batch.targets.size() << " targets");
  const T loss =
      model.forward(acts, batch.tokens.data(), batch.targets.data(), batch.batch, batch.seq_len);
  model.backward(acts, loss_scale, ready);
  return loss;
}
//! [forward_backward]

template float forward_backward<float>(Model<float>&, const Batch&, float, Activations<float>&,
                                       const GradientReadyHook&);
template double forward_backward<double>(Model<double>&, const Batch&, double, Activations<double>&,
                                         const GradientReadyHook&);

}  // namespace book::train
