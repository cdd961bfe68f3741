// Graded tests of the step's first piece, forward_backward and its gradient-ready hook (they run
// every layer's backward, recorded under train.attention_backward): the hook's ranges come in
// backward order and tile the flat buffer, and a range's gradients are final when it fires.
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "chapters/04_training_baseline/step.h"
#include "common/testing/exercise.h"
#include "tests/04_training_baseline/gradcheck.h"
#include "tests/04_training_baseline/tiny_model.h"

namespace book::train {
namespace {

using testing::tiny_batch;
using testing::tiny_config;

EXERCISE_TEST("train.attention_backward", GradientReadyHook, RangesComeInBackwardOrderAndTile) {
  const Config config = tiny_config();
  Model<double> model(config, 2);
  testing::randomise(model, 51);
  const Batch batch = tiny_batch(52);
  std::vector<std::pair<std::size_t, std::size_t>> ranges;
  std::vector<std::vector<double>> at_call;  // the range's gradients when the hook fired
  model.zero_grad();
  forward_backward(model, batch, 1.0, [&](std::size_t begin, std::size_t end) {
    ranges.emplace_back(begin, end);
    at_call.emplace_back(model.grads().begin() + begin, model.grads().begin() + end);
  });
  const ParameterLayout& layout = model.layout();
  std::vector<std::pair<std::size_t, std::size_t>> want = {
      {layout.find("lnf_gain").offset, layout.total()}};
  for (int l = config.n_layer - 1; l >= 0; --l) want.push_back(layout.layer_range(l));
  want.emplace_back(0, layout.layer_range(0).first);  // wte and wpe, after the embedding backward
  ASSERT_EQ(ranges, want) << "final LayerNorm, blocks " << config.n_layer - 1
                          << "..0, then the embeddings";
  for (std::size_t i = 0; i + 1 < ranges.size(); ++i)
    EXPECT_EQ(ranges[i + 1].second, ranges[i].first)
        << "ranges " << i << " and " << i + 1 << " must be adjacent (they tile the buffer)";
  for (std::size_t r = 0; r < ranges.size(); ++r)
    for (std::size_t i = ranges[r].first; i < ranges[r].second; ++i)
      ASSERT_EQ(at_call[r][i - ranges[r].first], model.grads()[i])
          << "flat element " << i << " changed after the hook reported range " << r << " final: ["
          << ranges[r].first << ", " << ranges[r].second << ")";
}

EXERCISE_TEST("train.attention_backward", ForwardBackward, EqualsForwardThenBackwardBitForBit) {
  // Two micro-batches accumulated with forward_backward, against forward() and backward() by
  // hand; loss scale 8 and 1/2 as in FP16 training with accumulation.
  Config config = tiny_config();
  Model<float> a(config, 2), b(config, 2);
  a.init(53);
  b.init(53);
  a.zero_grad();
  b.zero_grad();
  float loss_a = 0, loss_b = 0;
  for (std::uint64_t seed : {54, 55}) {
    const Batch batch = tiny_batch(seed);
    loss_a += forward_backward(a, batch, 4.0f);
    loss_b += b.forward(batch.tokens.data(), batch.targets.data(), batch.batch, batch.seq_len);
    b.backward(4.0f);
  }
  EXPECT_EQ(loss_a, loss_b);
  EXPECT_EQ(std::memcmp(a.grads().data(), b.grads().data(), a.grads().size() * sizeof(float)), 0)
      << "forward_backward must be exactly forward() then backward()";
  float largest = 0;
  for (float g : a.grads()) largest = std::max(largest, std::fabs(g));
  EXPECT_GT(largest, 0.0f) << "the gradients must not all be zero";
}

}  // namespace
}  // namespace book::train
