// Graded tests of the pipeline pieces (they run every layer's backward, recorded under
// train.attention_backward): model stages over ranges of layers reproduce the whole model, and
// several micro-batches can be in flight at once.
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "chapters/04_training_baseline/parameter_copy.h"
#include "chapters/04_training_baseline/step.h"
#include "common/testing/exercise.h"
#include "tests/04_training_baseline/gradcheck.h"
#include "tests/04_training_baseline/tiny_model.h"

namespace book::train {
namespace {

using testing::tiny_batch;
using testing::tiny_config;

// Runs one micro-batch through `stages` (each a Model over a range of layers) as a pipeline
// would: activations cross each boundary forward and their gradients backward, as plain arrays
// (what chapter 8 sends through the Communicator). Returns the loss.
double run_pipeline(std::vector<std::unique_ptr<Model<double>>>& stages, const Batch& b) {
  const Config& config = stages.front()->config();
  const std::size_t nc = static_cast<std::size_t>(b.batch) * b.seq_len * config.d_model;
  std::vector<std::unique_ptr<Activations<double>>> acts;
  for (auto& stage : stages) acts.push_back(std::make_unique<Activations<double>>(*stage));
  double loss = 0;
  for (std::size_t s = 0; s < stages.size(); ++s) {
    Model<double>& stage = *stages[s];
    const int first = stage.part().first_layer, last = stage.part().last_layer;
    if (s == 0) {
      stage.embed_forward(*acts[s], b.tokens.data(), b.batch, b.seq_len);
    } else {
      acts[s]->set_shape(b.batch, b.seq_len);
      const double* sent = acts[s - 1]->residual(first);  // "receive" from the previous stage
      std::copy(sent, sent + nc, acts[s]->residual(first));
    }
    stage.layers_forward(*acts[s], first, last);
    if (s + 1 == stages.size()) loss = stage.head_forward(*acts[s], b.targets.data());
  }
  for (std::size_t s = stages.size(); s-- > 0;) {
    Model<double>& stage = *stages[s];
    const int first = stage.part().first_layer, last = stage.part().last_layer;
    if (s + 1 == stages.size()) {
      stage.head_backward(*acts[s], 1.0);
    } else {
      const double* sent = acts[s + 1]->residual_grad(last);  // "receive" from the next stage
      std::copy(sent, sent + nc, acts[s]->residual_grad(last));
    }
    stage.layers_backward(*acts[s], last, first);
    if (s == 0) stage.embed_backward(*acts[s]);
  }
  return loss;
}

EXERCISE_TEST("train.attention_backward", PipelineParallel, TwoAndThreeStagesReproduceTheWhole) {
  const Config config = tiny_config();  // 3 layers
  const Batch b = tiny_batch(96);
  Model<double> whole(config, 2);
  testing::randomise(whole, 97);
  whole.zero_grad();
  const double loss = forward_backward(whole, b, 1.0);
  const std::size_t wte_size = static_cast<std::size_t>(config.vocab_size) * config.d_model;

  for (const std::vector<int>& cuts : {std::vector<int>{0, 2, 3}, std::vector<int>{0, 1, 2, 3}}) {
    SCOPED_TRACE(std::to_string(cuts.size() - 1) + " stages");
    std::vector<std::unique_ptr<Model<double>>> stages;
    for (std::size_t s = 0; s + 1 < cuts.size(); ++s) {
      ModelOptions<double> options;
      options.part = ModelPart{cuts[s], cuts[s + 1]};
      stages.push_back(std::make_unique<Model<double>>(config, 2, options));
      Model<double>& stage = *stages.back();
      copy_from_whole<double>(whole.layout(), whole.params().span(), stage.layout(),
                              stage.params().span());
      stage.zero_grad();
    }
    EXPECT_EQ(run_pipeline(stages, b), loss) << "the pipeline's loss must be bit-identical";

    // The tied wte: the first stage added the embedding's use, the last the head's. Their sum
    // (an all-reduce between the two stages) is the whole model's gradient.
    Model<double>& first = *stages.front();
    Model<double>& last = *stages.back();
    ASSERT_EQ(first.tied_embedding_grad().size(), wte_size);
    ASSERT_EQ(last.tied_embedding_grad().size(), wte_size);
    for (std::size_t i = 0; i < wte_size; ++i) {
      const double sum = first.tied_embedding_grad()[i] + last.tied_embedding_grad()[i];
      first.tied_embedding_grad()[i] = last.tied_embedding_grad()[i] = sum;
    }
    EXPECT_EQ(std::memcmp(first.tied_embedding().data(), last.tied_embedding().data(),
                          wte_size * sizeof(double)),
              0)
        << "both stages hold the same tied matrix";

    std::vector<double> assembled(whole.layout().total(), std::numeric_limits<double>::quiet_NaN());
    std::size_t held = 0;
    for (auto& stage : stages) {
      copy_to_whole<double>(stage->layout(), stage->grads().span(), whole.layout(), assembled);
      held += stage->layout().total();
    }
    EXPECT_EQ(held, whole.layout().total() + wte_size)
        << "each stage holds only its own layers' parameters (wte twice: first and last stage)";
    for (const auto& slot : whole.layout().slots())
      for (std::size_t i = slot.offset; i < slot.offset + slot.size(); ++i) {
        const double want = whole.grads()[i], got = assembled[i];
        if (slot.name == "wte")  // summed in another order than the whole model's
          ASSERT_NEAR(got, want, 1e-12 * std::max(1.0, std::fabs(want))) << slot.name << " " << i;
        else
          ASSERT_EQ(got, want) << slot.name << "[" << i - slot.offset
                               << "]: a stage's gradient must be bit-identical to the whole "
                                  "model's";
      }
  }
}

EXERCISE_TEST("train.attention_backward", MicroBatchesInFlight, EqualOneAfterAnother) {
  // Forward A, forward B, backward B, backward A, each with its own Activations, against B then
  // A one after another: the same gradients in the same order of accumulation, so the same bits.
  // And forward A, forward B, backward A, backward B against A then B.
  const Config config = tiny_config();
  const Batch a = tiny_batch(61), b = tiny_batch(62, 1, 4);  // different shapes in flight
  auto fresh = [&] {
    auto m = std::make_unique<Model<float>>(config, 2);
    m->init(63);
    m->zero_grad();
    return m;
  };
  auto expect_same_grads = [](Model<float>& want, Model<float>& got, const char* what) {
    EXPECT_EQ(std::memcmp(want.grads().data(), got.grads().data(), want.grads().bytes()), 0)
        << what << ": the gradients must be bit-identical to one micro-batch after another";
  };
  {
    auto sequential = fresh(), in_flight = fresh();
    forward_backward(*sequential, b, 1.0f);
    forward_backward(*sequential, a, 1.0f);
    Activations<float> acts_a(*in_flight), acts_b(*in_flight);
    const float loss_a = in_flight->forward(acts_a, a.tokens.data(), a.targets.data(), 2, 5);
    const float loss_b = in_flight->forward(acts_b, b.tokens.data(), b.targets.data(), 1, 4);
    in_flight->backward(acts_b);
    in_flight->backward(acts_a);
    EXPECT_NE(loss_a, loss_b);
    expect_same_grads(*sequential, *in_flight, "forward A, forward B, backward B, backward A");
  }
  {
    auto sequential = fresh(), in_flight = fresh();
    forward_backward(*sequential, a, 1.0f);
    forward_backward(*sequential, b, 1.0f);
    Activations<float> acts_a(*in_flight), acts_b(*in_flight);
    in_flight->forward(acts_a, a.tokens.data(), a.targets.data(), 2, 5);
    in_flight->forward(acts_b, b.tokens.data(), b.targets.data(), 1, 4);
    in_flight->backward(acts_a);
    in_flight->backward(acts_b);
    expect_same_grads(*sequential, *in_flight, "forward A, forward B, backward A, backward B");
  }
}

}  // namespace
}  // namespace book::train
