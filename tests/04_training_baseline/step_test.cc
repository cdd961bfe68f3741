// Graded tests of the step's first piece, forward_backward and its gradient-ready hook (they run
// every layer's backward, recorded under train.attention_backward): the hook's ranges come in
// backward order and tile the flat buffer, and a range's gradients are final when it fires.
#include <cmath>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "chapters/04_training_baseline/adamw_state.h"
#include "chapters/04_training_baseline/clipping.h"
#include "chapters/04_training_baseline/mixed_precision.h"
#include "chapters/04_training_baseline/step.h"
#include "chapters/04_training_baseline/trainer.h"
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

EXERCISE_TEST("train.adamw_step", StepPieces, ComposeIntoTheTrainersStepBitForBit) {
  // The recipe a parallel chapter follows, on one device: the same data stream, forward_backward
  // per micro-batch, FP16 through the span pieces and the loss scaler, one clip factor, and
  // AdamW over three shards of the flat range (a ZeRO-1 split) instead of one.
  TrainOptions options;
  options.digits = 2;
  options.model.n_layer = 2;
  options.model.n_head = 2;
  options.model.d_model = 16;
  options.micro_batch = 4;
  options.accumulation = 2;
  options.total_steps = 20;
  options.warmup_steps = 2;
  options.precision = DType::kF16;
  options.scaler.initial_scale = options.scaler.max_scale = 16777216.0f;  // first steps overflow
  options.scaler.growth_interval = 2;
  Trainer trainer(options);
  const TrainOptions& o = trainer.options();  // with the task's vocabulary and context

  Model<float> model(o.model, o.micro_batch);
  model.init(o.seed);
  const std::size_t n = model.layout().total();
  std::vector<float> master(model.params().begin(), model.params().end());
  std::vector<std::uint16_t> low_weights(n), low_grads(n);
  encode(o.precision, master, low_weights);
  decode(o.precision, low_weights, model.params().span());
  const std::size_t cuts[] = {0, n / 3 + 1, 2 * n / 3 + 5, n};
  std::vector<AdamWState> shards;
  for (int s = 0; s < 3; ++s) shards.emplace_back(cuts[s], cuts[s + 1]);
  LossScaler scaler(o.scaler);
  Rng data = training_data_stream(o);
  const AdditionTask task(o.digits);
  int skipped = 0;
  for (std::int64_t step = 1; step <= 6; ++step) {
    const StepResult want = trainer.step();
    const float lr = learning_rate(step, o.warmup_steps, o.total_steps, o.max_lr, o.min_lr);
    const float scale = scaler.scale();
    model.zero_grad();
    double loss = 0;
    for (int micro = 0; micro < o.accumulation; ++micro)
      loss += forward_backward(model, task.batch(data, Split::kTrain, o.micro_batch),
                               scale / static_cast<float>(o.accumulation));
    EXPECT_EQ(static_cast<float>(loss / o.accumulation), want.loss) << "step " << step;
    std::span<float> grads = model.grads().span();
    encode(o.precision, grads, low_grads);
    decode(o.precision, low_grads, grads);
    unscale(grads, scale);
    if (!scaler.update(!all_finite(grads))) {
      EXPECT_TRUE(want.skipped) << "step " << step;
      ++skipped;
      continue;
    }
    const double squares = sum_of_squares(grads);
    EXPECT_EQ(std::sqrt(squares), want.grad_norm) << "step " << step;
    scale_gradients(grads, clip_coefficient(squares, o.clip_norm));
    for (auto& shard : shards)
      adamw_update(model.layout(), shard,
                   std::span<float>(master).subspan(shard.begin(), shard.size()),
                   grads.subspan(shard.begin(), shard.size()), lr, o.adamw);
    encode(o.precision, master, low_weights);
    decode(o.precision, low_weights, model.params().span());
  }
  EXPECT_GT(skipped, 0) << "the run must include a skipped step";
  EXPECT_EQ(
      std::memcmp(model.params().data(), trainer.model().params().data(), model.params().bytes()),
      0)
      << "the pieces, with AdamW in three shards, must give the trainer's weights bit for bit";
}

}  // namespace
}  // namespace book::train
