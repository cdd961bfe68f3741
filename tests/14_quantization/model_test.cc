// Graded tests of chapter 14's model-level quantisation (each case runs the exercises: quantize's
// per-channel INT8 and INT4 packing, int8_gemv, smooth_scales, awq_search): weight bytes counted
// exactly, INT8 weight-only accuracy next to FP32's, SmoothQuant's migration exact in FP32 and
// better than plain per-tensor W8A8 on the outlier model, the report's tables, and the refusals
// that need a quantised bundle.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "chapters/10_paged_attention/served_model.h"
#include "chapters/14_quantization/accuracy.h"
#include "chapters/14_quantization/decode_speed.h"
#include "chapters/14_quantization/model_quant.h"
#include "chapters/14_quantization/model_report.h"
#include "chapters/14_quantization/outliers.h"
#include "common/rng.h"
#include "common/testing/exercise.h"
#include "common/testing/expect_error.h"

namespace book::quant {
namespace {

using book::testing::expect_error;

const std::string kCheckpoint = "chapters/10_paged_attention/addition_checkpoint.bin";
const Scheme kInt8{Bits::kInt8, Symmetry::kSymmetric, Granularity::kPerChannel};
const Scheme kInt4g32{Bits::kInt4, Symmetry::kSymmetric, Granularity::kGroup, 32};

EXERCISE_TEST("quant.per_channel_int8", ModelQuant, WeightBytesAreCountedExactly) {
  auto model = kv::load_checkpoint_model(kv::runfile(kCheckpoint));
  const train::Config& c = model->config();
  const std::size_t in_out[4][2] = {{64, 192}, {64, 64}, {64, 256}, {256, 64}};
  ASSERT_EQ(c.d_model, 64);
  std::size_t weights = 0, int8 = 0, int4 = 0;
  for (const auto& p : in_out) {
    weights += p[0] * p[1];
    int8 += p[0] * p[1] + 4 * p[1];                  // a byte a weight, a float per output row
    int4 += p[0] * p[1] / 2 + 4 * p[1] * p[0] / 32;  // a nibble a weight, a float per 32
  }
  weights *= c.n_layer, int8 *= c.n_layer, int4 *= c.n_layer;
  const std::size_t rest = 4 * (static_cast<std::size_t>(c.parameter_count()) - weights);
  const QuantizedModel q8 = quantize_model(*model, kInt8);
  EXPECT_EQ(q8.block_weights(), static_cast<std::int64_t>(weights));
  EXPECT_EQ(q8.block_bytes(), int8);
  EXPECT_EQ(q8.model_bytes(), int8 + rest);
  EXPECT_DOUBLE_EQ(q8.block_bits_per_weight(), 8.0 * int8 / weights);
  const QuantizedModel q4 = quantize_model(*model, kInt4g32);
  EXPECT_EQ(q4.block_bytes(), int4);
  EXPECT_DOUBLE_EQ(q4.block_bits_per_weight(), 4 + 32.0 / 32);
  // Two FP32 columns of layer 0's fc cost 4 bytes per weight of their rows.
  QuantizeOptions keep;
  keep.fp32_columns.resize(c.n_layer);
  keep.fp32_columns[0][2] = {3, 40};
  EXPECT_EQ(quantize_model(*model, kInt8, keep).block_bytes(), int8 + 2 * 256 * 4);
}

// QuantizedLinear::forward against its definition in double: x divided by the divisor, the FP32
// columns apart, the rest fake-quantised per token, times the dequantised W, plus the bias.
EXERCISE_TEST("quant.int8_gemv", ModelQuant, ProjectionForwardMatchesItsDefinition) {
  Rng rng(31);
  const int in = 24, out = 13, rows = 5;
  std::vector<float> wt(in * out), x(rows * in);
  for (float& v : wt) v = static_cast<float>(rng.uniform(-1, 1));
  for (float& v : x) v = static_cast<float>(rng.uniform(-3, 3));
  QuantizedLinear p;
  p.in = in;
  p.out = out;
  p.fp32_inputs = {2, 17};
  for (int j = 0; j < in; ++j) p.divisor.push_back(static_cast<float>(rng.uniform(0.5, 2)));
  for (int o = 0; o < out; ++o) p.bias.push_back(static_cast<float>(rng.uniform(-1, 1)));
  for (const int j : p.fp32_inputs)
    for (int o = 0; o < out; ++o) {
      p.fp32_weight.push_back(wt[o * in + j]);
      wt[o * in + j] = 0;
    }
  p.weight = quantize(wt, out, in, kInt8);
  p.activations = ActivationQuant::kPerToken;
  std::vector<float> y(rows * out, NAN);
  p.forward(x.data(), rows, y.data(), reference_kernel(p.weight));
  for (int t = 0; t < rows; ++t) {
    std::vector<double> xin(in);
    double m = 0;
    for (int j = 0; j < in; ++j) {
      xin[j] = static_cast<double>(x[t * in + j]) / p.divisor[j];
      if (j != 2 && j != 17) m = std::max(m, std::abs(xin[j]));
    }
    const double s = static_cast<float>(m) / 127.0f;
    for (int o = 0; o < out; ++o) {
      double want = p.bias[o];
      for (int j = 0; j < in; ++j) {
        if (j == 2 || j == 17) continue;
        want += p.weight.value(o, j) * (std::clamp(std::round(xin[j] / s), -127.0, 127.0) * s);
      }
      want += xin[2] * p.fp32_weight[o] + xin[17] * p.fp32_weight[out + o];
      EXPECT_NEAR(y[t * out + o], want, 1e-4 * (1 + std::abs(want)))
          << "row " << t << ", out " << o;
    }
  }
}

EXERCISE_TEST("quant.int8_gemv", ModelQuant, Int8WeightsAnswerWithinTwoPointsOfFp32) {
  auto model = kv::load_checkpoint_model(kv::runfile(kCheckpoint));
  const EvalSet set = make_eval_set(model->config(), 300, 41);
  const std::vector<float> reference = teacher_forced_logits(*model, set.sequences);
  const Quality fp32 = evaluate(*model, set, {}, reference);
  EXPECT_EQ(fp32.kl, 0.0);
  EXPECT_EQ(fp32.top1, 1.0);
  const QuantizedModel q = quantize_model(*model, kInt8);
  const Quality int8 = evaluate(*model, set, serve(q, model->config()), reference);
  EXPECT_GE(int8.correct, fp32.correct - 6)
      << "FP32 " << fp32.correct << " of 300, INT8 " << int8.correct << ": at most 2 points lower";
  EXPECT_GT(int8.kl, 0.0);
  EXPECT_LT(int8.kl, 1e-2);
  EXPECT_GE(int8.top1, 0.98);
}

EXERCISE_TEST("quant.smooth_scales", ModelQuant, SmoothQuantMigrationLeavesFp32LogitsUnchanged) {
  auto model = kv::load_checkpoint_model(kv::runfile(kCheckpoint));
  inject_outliers(*model, 2, 20, 100, 7);
  const auto sequences = calibration_sequences(model->config(), 30, 8);
  const std::vector<float> before = teacher_forced_logits(*model, sequences);
  const Calibration stats = calibrate(*model, sequences);
  for (const double alpha : {0.0, 0.5, 1.0}) {
    auto smoothed = clone(*model);
    smooth(*smoothed, stats, alpha);
    const std::vector<float> after = teacher_forced_logits(*smoothed, sequences);
    double largest = 0, worst = 0;
    for (std::size_t i = 0; i < before.size(); ++i) {
      largest = std::max(largest, std::abs(static_cast<double>(before[i])));
      worst = std::max(worst, std::abs(static_cast<double>(before[i]) - after[i]));
    }
    // Relative 1e-4 of the largest logit: rounding of s·w and gain/s, not a change of function.
    EXPECT_LE(worst, 1e-4 * largest) << "alpha " << alpha;
  }
  auto smoothed = clone(*model);
  expect_error([&] { smooth(*smoothed, stats, 1.5); }, "1.5");
  expect_error([&] { smooth(*smoothed, stats, -0.1); }, "-0.1");
}

// Why the α sweep is flat on the outlier model: outliers made by X·D, D⁻¹·W get SmoothQuant scales
// s' = D·s at every α, so the smoothed model is the plain model smoothed, to rounding.
EXERCISE_TEST("quant.smooth_scales", ModelQuant, SmoothingUndoesTheReparametrisationAtEveryAlpha) {
  auto plain = kv::load_checkpoint_model(kv::runfile(kCheckpoint));
  auto outliers = clone(*plain);
  inject_outliers(*outliers, 2, 20, 100, 7);
  const auto sequences = calibration_sequences(plain->config(), 30, 8);
  const Calibration plain_stats = calibrate(*plain, sequences);
  const Calibration outlier_stats = calibrate(*outliers, sequences);
  for (const double alpha : {0.0, 0.3, 1.0}) {
    auto a = clone(*plain);
    auto b = clone(*outliers);
    smooth(*a, plain_stats, alpha);
    smooth(*b, outlier_stats, alpha);
    for (int l = 0; l < plain->config().n_layer; ++l) {
      const auto ta = block_tensors(*a, l), tb = block_tensors(*b, l);
      for (int j = 0; j < plain->config().d_model; ++j) {
        // Relative 1e-4: k up to 100 multiplied in and divided out, and absmax measured on
        // activations computed in float.
        EXPECT_NEAR(tb.ln1_gain[j], ta.ln1_gain[j], 1e-4 * std::abs(ta.ln1_gain[j]) + 1e-7)
            << "alpha " << alpha << ", layer " << l << ", channel " << j;
        EXPECT_NEAR(tb.ln2_gain[j], ta.ln2_gain[j], 1e-4 * std::abs(ta.ln2_gain[j]) + 1e-7)
            << "alpha " << alpha << ", layer " << l << ", channel " << j;
      }
    }
  }
}

EXERCISE_TEST("quant.smooth_scales", ModelQuant, SmoothQuantBeatsPerTensorW8A8OnOutliers) {
  auto model = kv::load_checkpoint_model(kv::runfile(kCheckpoint));
  ModelQuantOptions o;
  o.calibration = 6;
  o.held_out = 24;
  o.alpha_steps = 2;
  const ModelQuantReport report = run_model_quant(*model, o);
  const auto find = [&](const std::string& prefix, bool outliers) {
    for (const SchemeRow& r : report.rows)
      if (r.outliers == outliers && r.scheme.rfind(prefix, 0) == 0) return r;
    ADD_FAILURE() << "no row " << prefix;
    return SchemeRow{};
  };
  const SchemeRow plain = find("W8A8 per-tensor", true);
  const SchemeRow smoothed = find("W8A8 per-tensor + SmoothQuant", true);
  const SchemeRow plain_off = find("W8A8 per-tensor", false);
  EXPECT_GT(plain.quality.kl, 3 * plain_off.quality.kl) << "outliers must hurt per-tensor W8A8";
  EXPECT_LT(smoothed.quality.kl, plain.quality.kl / 3) << "SmoothQuant at its best alpha";
  EXPECT_EQ(report.sweep.size(), 3u * 3);
  const double best = report.best_alpha(ActivationQuant::kPerTensor, true);
  EXPECT_TRUE(smoothed.scheme.find("a=" + std::to_string(best).substr(0, 3)) != std::string::npos)
      << smoothed.scheme << " should use the sweep's best alpha " << best;
  EXPECT_EQ(report.table().rows().size(), report.rows.size());
  EXPECT_EQ(report.sweep_table().rows().size(), report.sweep.size());
}

EXERCISE_TEST("quant.per_channel_int8", ModelQuant, RefusesABundleOfAnotherModel) {
  auto model = kv::load_checkpoint_model(kv::runfile(kCheckpoint));
  train::Config wider = model->config();
  wider.d_model = 128;
  auto other = kv::random_model(wider, 3);
  const QuantizedModel q = quantize_model(*other, kInt8);
  expect_error([&] { serve(q, model->config()); }, {"width 128", "width 64"});
  QuantizedModel relabelled = quantize_model(*model, kInt8);
  relabelled.scheme = kInt4g32;
  expect_error([&] { serve(relabelled, model->config()); }, {"int8", "int4"});
  QuantizedModel cut = quantize_model(*model, kInt8);
  cut.layers[1][3].weight.data.pop_back();
  expect_error([&] { serve(cut, model->config()); }, "");
}

EXERCISE_TEST("quant.awq_search", ModelQuant, AwqNeedsKeptInputsAndFitsItsGroups) {
  auto model = kv::load_checkpoint_model(kv::runfile(kCheckpoint));
  const auto sequences = calibration_sequences(model->config(), 8, 2);
  const Calibration thin = calibrate(*model, sequences);
  expect_error([&] { awq(*model, thin, kInt4g32); }, "keep_inputs");
  const Calibration full = calibrate(*model, sequences, true);
  const auto divisors = awq(*model, full, kInt4g32);
  ASSERT_EQ(divisors.size(), static_cast<std::size_t>(model->config().n_layer));
  EXPECT_TRUE(divisors[0][0].empty()) << "qkv's scales go into LN1";
  EXPECT_EQ(divisors[0][3].size(), 256u) << "proj keeps its divisors";
}

EXERCISE_TEST("quant.int8_gemv", DecodeSpeed, EngineServesQuantisedWeights) {
  auto model = kv::load_checkpoint_model(kv::runfile(kCheckpoint));
  const QuantizedModel q = quantize_model(*model, kInt8);
  const int fp32 = engine_correct(*model, nullptr, 100, 5);
  EXPECT_GE(engine_correct(*model, &q, 100, 5), fp32 - 2) << "INT8 through the engine";
  DecodeSpeedOptions o;
  o.d_model = 64;
  o.layers = 2;
  o.requests = 3;
  o.prompt = 5;
  o.new_tokens = 3;
  o.repetitions = 2;
  o.int4_group = 32;  // 128 does not divide d_model 64
  const auto rows = decode_speed(o);
  ASSERT_EQ(rows.size(), 3u);
  const std::size_t weights = 2 * 12 * 64 * 64, head = 4 * 256 * 64;
  EXPECT_EQ(rows[0].bytes_per_step, 4 * weights + head);
  EXPECT_EQ(rows[1].bytes_per_step, weights + 4 * 2 * (192 + 64 + 256 + 64) + head);
  EXPECT_EQ(rows[2].bytes_per_step, weights / 2 + 4 * weights / 32 + head);
  for (const auto& r : rows) {
    EXPECT_EQ(r.tokens_per_second.size(), 2u);
    EXPECT_GT(r.median(), 0.0);
  }
  EXPECT_EQ(decode_speed_table(rows).rows().size(), 3u);
  // An FP32 kernel given: the dequantised-free reference product, to the same rows.
  int made = 0;
  const Fp32Kernel plain = [&](std::span<const float> w, int out, int in) {
    ++made;
    return PreparedLinear([w, out, in](const float* x, int m, float* y) {
      for (int t = 0; t < m; ++t)
        for (int r = 0; r < out; ++r) {
          float sum = 0;
          for (int c = 0; c < in; ++c) sum += w[r * in + c] * x[t * in + c];
          y[t * out + r] = sum;
        }
    });
  };
  o.repetitions = 1;
  EXPECT_EQ(decode_speed(o, reference_kernel, plain)[0].weights, "FP32");
  EXPECT_EQ(made, 4 * o.layers);
  EXPECT_EQ(engine_accuracy_table(*model, 20, 6).rows().size(), 3u);
  o.d_model = 40;
  expect_error([&] { decode_speed(o); }, "d_model 40");
}

}  // namespace
}  // namespace book::quant
