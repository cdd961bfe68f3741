// The stage's scaffolding (not exercises): its command line, and the bandwidth model's
// arithmetic — tensor-parallel traffic per layer grows with t towards 8·S while a pipeline
// boundary's stays 2·S whatever the stage holds, and the compute it is compared with shrinks as
// 1/t.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "chapters/07_tensor_parallel/bandwidth_model.h"
#include "chapters/07_tensor_parallel/tp_stage.h"
#include "common/flags.h"
#include "common/testing/expect_error.h"

namespace book::tp {
namespace {

using book::testing::expect_error;

StageOptions parse(std::vector<const char*> args) {
  args.insert(args.begin(), "tp");
  return parse_stage_options(static_cast<int>(args.size()), args.data());
}

TEST(StageOptions, DefaultsTourAndRefusals) {
  const StageOptions defaults = parse({});
  EXPECT_EQ(defaults.steps, 20);
  EXPECT_EQ(defaults.degrees, (std::vector<int>{1, 2, 4}));
  EXPECT_FALSE(defaults.tour);
  const StageOptions tour = parse({"--tour"});
  EXPECT_EQ(tour.steps, 8);
  EXPECT_EQ(tour.moe_tokens, 256);
  EXPECT_EQ(tour.balance_steps, 40);
  EXPECT_EQ(parse({"--tour", "--steps=30"}).steps, 30) << "an explicit value wins over the tour's";
  EXPECT_EQ(parse({"--degrees=1,8"}).degrees, (std::vector<int>{1, 8}));
  expect_error([] { parse({"--steps=1"}); }, "--steps must be in 2..100000, got 1");
  expect_error([] { parse({"--degrees=2,x"}); }, "--degrees");
  expect_error([] { parse({"--frobnicate"}); }, "unknown flag --frobnicate");
  expect_error([] { parse({"--heads"}); }, "--heads");
  EXPECT_THROW(parse({"--help"}), HelpRequested);
}

TEST(StageOptions, TheTrainingRunTakesTheTasksShape) {
  StageOptions o;
  o.digits = 2;
  const train::TrainOptions training = stage_training(o);
  EXPECT_EQ(training.model.vocab_size, 12);
  EXPECT_EQ(training.model.context, 8) << "\"12+34=\" and 3 answer digits, less the last";
  o.heads = 5;  // d_model 64 is not a multiple of 5
  expect_error([&] { stage_training(o); }, "d_model");
}

TEST(BandwidthModel, TensorParallelTrafficGrowsWithTAndPipelineTrafficDoesNot) {
  const TransformerShape gpt3;
  const double s = 2048.0 * 12288 * 2;  // one all-reduce's buffer, bytes
  EXPECT_DOUBLE_EQ(tensor_parallel_bytes_per_layer(gpt3, 1), 0.0) << "one rank sends nothing";
  EXPECT_DOUBLE_EQ(tensor_parallel_bytes_per_layer(gpt3, 2), 4 * s) << "4 × 2(t−1)/t · S at t = 2";
  EXPECT_DOUBLE_EQ(tensor_parallel_bytes_per_layer(gpt3, 8), 4 * 2 * 7.0 / 8 * s);
  EXPECT_DOUBLE_EQ(pipeline_bytes_per_boundary(gpt3), 2 * s);
  TransformerShape deeper = gpt3;
  deeper.layers = 192;
  EXPECT_DOUBLE_EQ(pipeline_bytes_per_boundary(deeper), pipeline_bytes_per_boundary(gpt3))
      << "a boundary carries one activation whatever the stages hold";
  // 72·b·s·h²·(1 + s/6h): the forward pass's 24bsh²(1 + s/6h), three times.
  EXPECT_DOUBLE_EQ(layer_flops(gpt3), 72.0 * 2048 * 12288.0 * 12288 * (1 + 2048 / (6 * 12288.0)));
  const Hardware hardware;
  const auto rows = bandwidth_model(gpt3, hardware, {2, 8}, 8);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_DOUBLE_EQ(rows[0].compute_seconds, 4 * rows[1].compute_seconds)
      << "t = 8 computes a quarter of what t = 2 does";
  EXPECT_DOUBLE_EQ(rows[1].network_seconds / rows[1].nvlink_seconds,
                   hardware.nvlink.value / hardware.network.value);
  EXPECT_LT(rows[1].nvlink_seconds, rows[1].compute_seconds) << "TP t=8 fits under NVLink";
  EXPECT_GT(rows[1].network_seconds, rows[1].compute_seconds) << "but not under the network";
  EXPECT_LT(rows[2].network_seconds, 0.05 * rows[2].compute_seconds)
      << "a pipeline boundary is cheap even over the network";
  expect_error([&] { bandwidth_model(gpt3, hardware, {2}, 1); }, "at least 2 stages, got 1");
  expect_error([&] { tensor_parallel_bytes_per_layer(gpt3, 0); }, "t must be >= 1, got 0");
}

// A network of 0 bytes/s gave infinite seconds and hidden = 0 NaN FLOPs, without an error.
TEST(BandwidthModel, RefusesFiguresThatAreNotPositiveAndFinite) {
  const TransformerShape gpt3;
  Hardware no_network;
  no_network.network.value = 0;
  expect_error([&] { bandwidth_model(gpt3, no_network, {2}, 2); },
               "bandwidth_model: hardware.network must be positive and finite, got 0");
  Hardware nan_peak;
  nan_peak.peak.value = std::nan("");
  expect_error([&] { bandwidth_model(gpt3, nan_peak, {2}, 2); }, "hardware.peak");
  TransformerShape flat = gpt3;
  flat.hidden = 0;
  expect_error([&] { layer_flops(flat); },
               "layer_flops: shape.hidden must be positive and finite, got 0");
  expect_error([&] { bandwidth_model(flat, Hardware{}, {2}, 2); }, "shape.hidden");
  TransformerShape endless = gpt3;
  endless.sequence = std::numeric_limits<double>::infinity();
  expect_error([&] { tensor_parallel_bytes_per_layer(endless, 2); }, "shape.sequence");
  expect_error([&] { pipeline_bytes_per_boundary(endless); }, "got inf");
}

}  // namespace
}  // namespace book::tp
