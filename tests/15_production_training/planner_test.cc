// The 3D planner (planner.h): the decision order on small clusters whose answer is known (a model
// that fits takes DP alone; one that does not takes TP inside a node before PP; TP never crosses a
// slow link), its memory against chapter 9's calculator to the byte, the memory-limited partition
// on hand-worked cases, and each refusal.
#include "chapters/15_production_training/planner.h"
#include "chapters/15_production_training/planner_cluster.h"

#include <gtest/gtest.h>

#include <limits>

#include "common/testing/expect_error.h"

namespace book::prod {
namespace {

using book::testing::expect_error;

// Chapter 4's model (2 layers, 4 heads, width 64) on the namespace cluster's shape: 2 nodes of
// 2 devices, a fast link inside a node and a 1 Gbit/s one between them.
PlanInput tiny_on_two_nodes() {
  PlanInput in;
  in.shape = mem::preset("book");
  in.seq = in.shape.context;
  in.global_batch = 16;
  in.precision = DType::kF32;
  in.micro_batch_sizes = {1, 2, 4};
  in.cluster.name = "2 x 2";
  in.cluster.nodes = 2;
  in.cluster.devices_per_node = 2;
  in.cluster.memory_bytes = 1e9;
  in.cluster.flops_per_s = 1e9;
  in.cluster.intra = {1e-6, 5e9};
  in.cluster.inter = {50e-6, 1.25e8};
  return in;
}

bool same_except_placement(const Plan& a, const Plan& b) {
  return a.dp == b.dp && a.tp == b.tp && a.pp == b.pp && a.micro_batch == b.micro_batch &&
         a.zero == b.zero;
}

TEST(Planner, AModelThatFitsOneDeviceTakesDataParallelAlone) {
  // GPT-3 XL's shape (1.3B; Brown et al. 2020, Table 2.1) fits one 80 GB H100 whole: 16 bytes a
  // parameter plus selective recomputation's activations. On two nodes, DP alone wins.
  PlanInput in;
  in.shape.name = "gpt3-xl";
  in.shape.n_layer = 24;
  in.shape.d_model = 2048;
  in.shape.n_head = in.shape.n_kv_head = 16;
  in.shape.d_ff = 4 * 2048;
  in.shape.vocab_size = 50257;
  in.shape.context = 2048;
  in.seq = 2048;
  in.global_batch = 512;
  in.recompute = mem::Recomputation::kSelective;
  in.cluster = h100_cluster(2);
  mem::Setup one;
  one.shape = in.shape;
  one.seq = in.seq;
  one.recompute = in.recompute;
  ASSERT_LT(static_cast<double>(mem::calculate(one).total()), in.cluster.memory_bytes);
  const std::vector<Plan> plans = rank_plans(in);
  ASSERT_FALSE(plans.empty());
  EXPECT_EQ(plans[0].dp, 16) << plans[0].name();
  EXPECT_EQ(plans[0].tp, 1) << plans[0].name();
  EXPECT_EQ(plans[0].pp, 1) << plans[0].name();
  // Every plan is the whole cluster, m = batch / (dp · b), and its terms add up.
  for (const Plan& p : plans) {
    EXPECT_EQ(p.dp * p.tp * p.pp, 16) << p.name();
    EXPECT_EQ(p.micro_batches * p.dp * p.micro_batch, 512) << p.name();
    EXPECT_DOUBLE_EQ(p.step_s, p.compute_s + p.tp_s + p.pp_s + p.bubble_s + p.dp_s) << p.name();
  }
}

TEST(Planner, TheTwoByTwoPlacementsOfTheClusterCheckAreThere) {
  // tp 2 × pp 2 on 2 nodes of 2: TP inside the nodes and PP across, or the other way round.
  const std::vector<Plan> plans = rank_plans(tiny_on_two_nodes());
  const Plan* tp_inside = nullptr;
  const Plan* tp_across = nullptr;
  for (const Plan& p : plans) {
    if (p.tp != 2 || p.pp != 2 || p.micro_batch != 1) continue;
    if (!p.tp_crosses && p.pp_crosses && !tp_inside) tp_inside = &p;
    if (p.tp_crosses && !p.pp_crosses && !tp_across) tp_across = &p;
  }
  ASSERT_NE(tp_inside, nullptr);
  ASSERT_NE(tp_across, nullptr);
  EXPECT_LT(tp_inside->step_s, tp_across->step_s);
  EXPECT_EQ(tp_inside->boundaries, (std::vector<int>{0, 1, 2}));
  EXPECT_NE(why_ahead(*tp_inside, *tp_across).find("TP all-reduces"), std::string::npos)
      << why_ahead(*tp_inside, *tp_across);
}

TEST(Planner, TensorParallelismNeverCrossesASlowLink) {
  // A plan whose TP group spans nodes is always behind its twin with TP inside a node.
  PlanInput in = tiny_on_two_nodes();
  in.cluster.nodes = 4;  // 8 devices: tp 4 can cross or not
  in.global_batch = 32;
  const std::vector<Plan> plans = rank_plans(in);
  int crossing = 0;
  for (const Plan& p : plans) {
    if (!p.tp_crosses || p.tp > in.cluster.devices_per_node) continue;  // tp 4 > 2 must cross
    ++crossing;
    bool has_faster_twin = false;
    for (const Plan& q : plans)
      if (same_except_placement(p, q) && !q.tp_crosses && q.step_s < p.step_s)
        has_faster_twin = true;
    EXPECT_TRUE(has_faster_twin) << p.name();
  }
  EXPECT_GT(crossing, 0);
  EXPECT_FALSE(plans[0].tp_crosses) << plans[0].name();
}

TEST(Planner, AModelTooBigForOneDeviceTakesTensorParallelismInsideANodeBeforePipelines) {
  // No ZeRO, one node of 4 on a fast link: the model's states need two devices' memory. TP on
  // the fast link costs little; PP pays its bubble.
  PlanInput in = tiny_on_two_nodes();
  in.cluster.nodes = 1;
  in.cluster.devices_per_node = 4;
  in.cluster.intra = {0, 1e15};
  in.zero_stages = {zero::Stage::kDdp};
  in.micro_batch_sizes = {1};
  in.global_batch = 8;
  mem::Setup one;
  one.shape = in.shape;
  one.seq = in.seq;
  one.precision = in.precision;
  const double alone = static_cast<double>(mem::calculate(one).total());
  in.cluster.memory_bytes = 0.75 * alone;
  const std::vector<Plan> plans = rank_plans(in);
  for (const Plan& p : plans) EXPECT_FALSE(p.tp == 1 && p.pp == 1) << p.name() << " fits?";
  EXPECT_GT(plans[0].tp, 1) << plans[0].name();
  EXPECT_EQ(plans[0].pp, 1) << plans[0].name();
}

TEST(Planner, MemoryIsChapterNinesCalculatorToTheByte) {
  // One device: the plan is feasible exactly when the calculator's total fits.
  PlanInput in = tiny_on_two_nodes();
  in.cluster.nodes = 1;
  in.cluster.devices_per_node = 1;
  in.global_batch = 4;
  in.micro_batch_sizes = {2};
  mem::Setup setup;
  setup.shape = in.shape;
  setup.seq = in.seq;
  setup.micro_batch = 2;
  setup.precision = in.precision;
  const std::uint64_t needed = mem::calculate(setup).total();
  in.cluster.memory_bytes = static_cast<double>(needed);
  const std::vector<Plan> plans = rank_plans(in);
  ASSERT_EQ(plans.size(), 1u);
  EXPECT_EQ(plans[0].calculator_bytes, needed);
  ASSERT_EQ(plans[0].stage_bytes.size(), 1u);
  EXPECT_NEAR(plans[0].stage_bytes[0], static_cast<double>(needed), 1e-9 * needed);
  in.cluster.memory_bytes = static_cast<double>(needed - 1);
  expect_error([&] { rank_plans(in); }, {"fits nowhere", "needs", "per device, a device holds"});
}

// Eight layers of cost 1, state 1 byte, activation 1 byte per micro-batch in flight; two
// stages: the first holds 2 micro-batches (3 bytes a layer), the second 1 (2 bytes a layer).
StageMemory eight_layers(double limit) {
  StageMemory m;
  m.layer_state_bytes.assign(8, 1);
  m.layer_activation_bytes.assign(8, 1);
  m.limit = limit;
  return m;
}

TEST(PartitionWithinMemory, UnlimitedIsChapterEightsPartition) {
  const std::vector<double> costs(8, 1);
  const auto part = partition_within_memory(costs, 2, 0, 0, eight_layers(1e9));
  ASSERT_TRUE(part.has_value());
  EXPECT_EQ(part->boundaries, pp::partition_layers(costs, 2).boundaries);
  EXPECT_EQ(part->boundaries, (std::vector<int>{0, 4, 8}));
  EXPECT_EQ(stage_bytes(eight_layers(1e9), part->boundaries), (std::vector<double>{12, 8}));
}

TEST(PartitionWithinMemory, ALimitMovesLayersOffTheFirstStage) {
  // 10 bytes: the first stage holds at most 3 layers (9 bytes), the second 5 (10).
  const std::vector<double> costs(8, 1);
  const auto part = partition_within_memory(costs, 2, 0, 0, eight_layers(10));
  ASSERT_TRUE(part.has_value());
  EXPECT_EQ(part->boundaries, (std::vector<int>{0, 3, 8}));
  EXPECT_EQ(part->largest, 5);
  for (double b : stage_bytes(eight_layers(10), part->boundaries)) EXPECT_LE(b, 10);
  // 9 bytes: at most 3 + 4 layers, not 8.
  EXPECT_FALSE(partition_within_memory(costs, 2, 0, 0, eight_layers(9)).has_value());
}

TEST(PartitionWithinMemory, TheEmbeddingAndTheHeadWeigh) {
  // The head's 4 bytes on the last stage push a layer back to the first.
  const std::vector<double> costs(8, 1);
  StageMemory m = eight_layers(12);
  m.last_bytes = 4;
  const auto part = partition_within_memory(costs, 2, 0, 0, m);
  ASSERT_TRUE(part.has_value());
  EXPECT_EQ(part->boundaries, (std::vector<int>{0, 4, 8}));  // 12 and 8 + 4 bytes
  m.last_bytes = 6;  // the second stage holds at most 3 layers; the first 4: 7 < 8
  EXPECT_FALSE(partition_within_memory(costs, 2, 0, 0, m).has_value());
}

TEST(PartitionWithinMemory, Refusals) {
  const std::vector<double> costs(8, 1);
  StageMemory m = eight_layers(10);
  m.layer_activation_bytes.pop_back();
  expect_error([&] { partition_within_memory(costs, 2, 0, 0, m); },
               {"8 layer costs", "7 activations"});
  expect_error([&] { partition_within_memory(costs, 9, 0, 0, eight_layers(10)); },
               "fewer layers than stages");
}

TEST(Planner, Refusals) {
  PlanInput in = tiny_on_two_nodes();
  in.cluster.nodes = 0;
  expect_error([&] { rank_plans(in); }, {"no devices", "0 nodes"});
  in = tiny_on_two_nodes();
  in.cluster.devices_per_node = 0;
  expect_error([&] { rank_plans(in); }, "no devices");
  in = tiny_on_two_nodes();
  in.cluster.inter.bytes_per_s = 0;
  expect_error([&] { rank_plans(in); }, {"inter-node", "bandwidth must be positive", "got 0"});
  in = tiny_on_two_nodes();
  in.cluster.intra.bytes_per_s = -1;
  expect_error([&] { rank_plans(in); }, {"intra-node", "bandwidth"});
  in = tiny_on_two_nodes();
  in.cluster.intra.alpha_s = std::numeric_limits<double>::quiet_NaN();
  expect_error([&] { rank_plans(in); }, "alpha");
  in = tiny_on_two_nodes();
  in.cluster.memory_bytes = 0;
  expect_error([&] { rank_plans(in); }, "memory must be positive");
  in = tiny_on_two_nodes();
  in.cluster.flops_per_s = 0;
  expect_error([&] { rank_plans(in); }, "FLOP/s must be positive");
  in = tiny_on_two_nodes();
  in.global_batch = 0;
  expect_error([&] { rank_plans(in); }, "global batch must be at least 1");
  in = tiny_on_two_nodes();
  in.micro_batch_sizes = {};
  expect_error([&] { rank_plans(in); }, "no micro-batch size");
  in = tiny_on_two_nodes();
  in.micro_batch_sizes = {0};
  expect_error([&] { rank_plans(in); }, "at least 1, got 0");
  in = tiny_on_two_nodes();
  in.zero_stages = {};
  expect_error([&] { rank_plans(in); }, "no ZeRO stage");
  in = tiny_on_two_nodes();
  in.shape.n_layer = 0;
  expect_error([&] { rank_plans(in); }, "--layers");
  // One layer and one head: only dp 4, and 6 sequences do not split over 4 replicas.
  in = tiny_on_two_nodes();
  in.shape.n_layer = 1;
  in.shape.n_head = in.shape.n_kv_head = 1;
  in.global_batch = 6;
  expect_error([&] { rank_plans(in); }, {"global batch of 6", "not divisible", "multiple of 4"});
  // Three devices: neither tp 3 (4 heads) nor pp 3 (2 layers) fits, and dp 3 needs the batch.
  in = tiny_on_two_nodes();
  in.cluster.nodes = 1;
  in.cluster.devices_per_node = 3;
  in.global_batch = 4;
  expect_error([&] { rank_plans(in); }, {"global batch of 4", "multiple of 3"});
  in = tiny_on_two_nodes();
  in.cluster.memory_bytes = 1000;
  expect_error([&] { rank_plans(in); },
               {"fits nowhere on 4 devices", "bytes per device", "a device holds 1000 bytes"});
}

// The cluster check's input: the measured links as the planner's, and a FLOP rate that makes the
// planner's compute of one micro-batch on one device the measured t1.
TEST(Planner, TheClusterCheckCalibratesComputeToTheMeasuredMicroBatch) {
  const pp::PlacementOptions options;
  const pp::LinkCosts costs{10e-6, 4e9, 20e-6, 1.2e8};
  const double t1 = 0.5e-3;
  PlanInput in = placements_plan_input(options, costs, t1, 2);
  EXPECT_EQ(in.global_batch, 2 * options.micro_batches * options.batch);
  EXPECT_EQ(in.cluster.nodes, 2);
  EXPECT_EQ(in.cluster.devices_per_node, 2);
  EXPECT_EQ(in.cluster.inter.alpha_s, 20e-6);
  EXPECT_EQ(in.cluster.inter.bytes_per_s, 1.2e8);
  in.global_batch = options.batch;  // one micro-batch on one device: its compute is t1
  in.cluster.nodes = in.cluster.devices_per_node = 1;
  EXPECT_NEAR(rank_plans(in).front().compute_s, t1, 1e-12);
  book::testing::expect_error([&] { placements_plan_input(options, costs, 0, 1); },
                              "must be positive");
}

}  // namespace
}  // namespace book::prod
