// Our hand-written gradients against libtorch's autograd on the same weights and batch: an
// independent implementation of the same model (torch_peer.cc). Tolerance: 2e-4 of the largest
// gradient (both in FP32, with different summation orders).
#include <cmath>
#include <vector>

#include "chapters/04_training_baseline/model.h"
#include "chapters/04_training_baseline/torch_peer.h"
#include "chapters/04_training_baseline/trainer.h"
#include "common/testing/exercise.h"

namespace book::train {
namespace {

EXERCISE_TEST("train.attention_backward", TorchReference, SameLossAndGradientsAsAutograd) {
  TrainOptions options;  // the stage's model: 2 layers, d_model 64, 4 heads, 3-digit addition
  options.micro_batch = 16;
  Trainer trainer(options);
  Model<float>& model = trainer.model();
  Rng rng(101);
  const Batch batch = trainer.task().batch(rng, Split::kTrain, options.micro_batch);
  model.zero_grad();
  const float loss =
      model.forward(batch.tokens.data(), batch.targets.data(), batch.batch, batch.seq_len);
  model.backward();

  TorchGpt torch_model(trainer.options().model, model.params().data());
  const float torch_loss =
      torch_model.forward_backward(batch.tokens, batch.targets, batch.batch, batch.seq_len);
  EXPECT_NEAR(loss, torch_loss, 1e-5 * std::fabs(torch_loss)) << "loss: ours vs libtorch";
  const std::vector<float> expected = torch_model.gradients();
  ASSERT_EQ(expected.size(), model.grads().size());
  double largest = 0;
  for (float g : expected) largest = std::max(largest, std::fabs(static_cast<double>(g)));
  ASSERT_GT(largest, 0.0);
  int reported = 0;
  for (const auto& slot : model.layout().slots())
    for (std::size_t i = slot.offset; i < slot.offset + slot.size() && reported < 5; ++i)
      if (!(std::fabs(model.grads()[i] - expected[i]) <= 2e-4 * largest)) {
        ADD_FAILURE() << slot.name << "[" << i - slot.offset << "]: libtorch " << expected[i]
                      << ", ours " << model.grads()[i] << " (tolerance " << 2e-4 * largest << ")";
        ++reported;
      }
}

}  // namespace
}  // namespace book::train
