// Scaffolding of chapter 14's model-level code, no exercise called: the runner's projection seam
// (a LayerLinear doing chapter 4's linear_forward gives the same bits as no seam), the outlier
// reparametrisation (the FP32 function unchanged to rounding), and the refusals that come before
// any quantiser runs (a group size that does not divide, NaN calibration activations, bad
// outlier options).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "chapters/04_training_baseline/layers.h"
#include "chapters/10_paged_attention/served_model.h"
#include "chapters/14_quantization/accuracy.h"
#include "chapters/14_quantization/model_quant.h"
#include "chapters/14_quantization/outliers.h"
#include "common/testing/expect_error.h"

namespace book::quant {
namespace {

using book::testing::expect_error;

const std::string kCheckpoint = "chapters/10_paged_attention/addition_checkpoint.bin";

TEST(Seam, ChapterFoursLinearThroughTheSeamGivesTheSameBits) {
  auto model = kv::load_checkpoint_model(kv::runfile(kCheckpoint));
  const auto sequences = calibration_sequences(model->config(), 40, 3);
  const std::vector<float> plain = teacher_forced_logits(*model, sequences);
  int calls = 0;
  const kv::ModelRunner::LayerLinear linear = [&](int layer, train::Projection which,
                                                  const float* x, int rows, float* y) {
    ++calls;
    const ProjectionView v = projection_of(model->config(), block_tensors(*model, layer), which);
    train::linear_forward(x, rows, v.in, v.w, v.out, v.bias, v.out, y, v.out);
  };
  const std::vector<float> seamed = teacher_forced_logits(*model, sequences, linear);
  EXPECT_EQ(calls, 4 * model->config().n_layer)
      << "40 sequences: one step, four projections a layer";
  ASSERT_EQ(plain.size(), seamed.size());
  for (std::size_t i = 0; i < plain.size(); ++i)
    ASSERT_EQ(plain[i], seamed[i]) << "logit " << i << " differs: the seam must be bit-identical";
}

TEST(Outliers, ReparametrisationLeavesTheFunctionUnchangedAndMakesLargeChannels) {
  auto model = kv::load_checkpoint_model(kv::runfile(kCheckpoint));
  const auto sequences = calibration_sequences(model->config(), 30, 5);
  const std::vector<float> before = teacher_forced_logits(*model, sequences);
  const Calibration plain = calibrate(*model, sequences);
  auto changed = clone(*model);
  const auto made = inject_outliers(*changed, 2, 20, 100, 9);
  ASSERT_EQ(made.size(), 2u * 2 * model->config().n_layer);
  const std::vector<float> after = teacher_forced_logits(*changed, sequences);
  // Logits are O(10); multiplying by k and dividing by k rounds twice per weight, and LayerNorm's
  // channel j carries k times the magnitude into the float sums: relative 1e-4 of the largest.
  double largest = 0, worst = 0;
  for (std::size_t i = 0; i < before.size(); ++i) {
    largest = std::max(largest, std::abs(static_cast<double>(before[i])));
    worst = std::max(worst, std::abs(static_cast<double>(before[i]) - after[i]));
  }
  EXPECT_LE(worst, 1e-4 * largest) << "largest |logit| " << largest;
  const Calibration big = calibrate(*changed, sequences);
  for (const Outlier& o : made) {
    const int p = o.ln2 ? 2 : 0;
    EXPECT_NEAR(big.absmax[o.layer][p][o.channel] / plain.absmax[o.layer][p][o.channel], o.factor,
                1e-3 * o.factor)
        << "layer " << o.layer << " channel " << o.channel;
  }
}

TEST(Refusals, BeforeAnyQuantiserRuns) {
  auto model = kv::load_checkpoint_model(kv::runfile(kCheckpoint));
  const Scheme g128{Bits::kInt4, Symmetry::kSymmetric, Granularity::kGroup, 128};
  expect_error([&] { quantize_model(*model, g128); }, {"128", "64"});
  expect_error([&] { inject_outliers(*model, 0, 20, 100, 1); }, "channels 0");
  expect_error([&] { inject_outliers(*model, 1, 50, 20, 1); }, "min <= max");
  QuantizeOptions per_tensor;
  per_tensor.activations = ActivationQuant::kPerTensor;
  expect_error([&] { quantize_model(*model, Scheme{}, per_tensor); }, "calibrated absmax");
  const auto sequences = calibration_sequences(model->config(), 4, 1);
  expect_error([&] { calibrate(*model, {}); }, "no calibration sequences");
  const Calibration stats = calibrate(*model, sequences);
  expect_error([&] { smooth(*model, stats, 1.5); }, "alpha 1.5 must be in [0, 1]");
  expect_error([&] { smooth(*model, stats, NAN); }, "alpha nan");
  block_tensors(*model, 1).ln2_gain[3] = NAN;
  expect_error([&] { calibrate(*model, sequences); }, {"layer 1 fc input", "nan"});
}

}  // namespace
}  // namespace book::quant
