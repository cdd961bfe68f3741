// The calculator's scaffolding: the ZeRO paper's 7.5B example, published parameter counts of the
// presets, chapter 4's count for the book's model, 8-bit Adam's 10 bytes per parameter, the
// activation total with its embedding and output terms, buffers, MFU vs HFU, JSON, bad input.
#include "chapters/09_memory_accounting/calculator.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "chapters/09_memory_accounting/dp_states.h"
#include "common/testing/expect_error.h"

namespace book::mem {
namespace {

using zero::Stage;

TEST(DpModelStates, ZeroPapersExample) {
  // Rajbhandari et al. 2020, Fig. 1: Ψ = 7.5B, N = 64, K = 12: 120, 31.4, 16.6, 1.9 GB.
  const double expected_gb[] = {120.0, 31.4, 16.6, 1.9};
  for (Stage stage : {Stage::kDdp, Stage::kZero1, Stage::kZero2, Stage::kZero3}) {
    const double gb = dp_model_states(7'500'000'000ull, 64, stage, DType::kBF16).total() / 1e9;
    EXPECT_EQ(std::round(gb * 10) / 10, expected_gb[static_cast<int>(stage)])
        << zero::stage_name(stage) << ": " << gb << " GB";
  }
  EXPECT_EQ(dp_model_states(7'500'000'000ull, 64, Stage::kZero3, DType::kBF16).parameters,
            2 * 117'187'500ull);
  testing::expect_error([] { dp_model_states(10, 0, Stage::kDdp, DType::kBF16); }, "--dp");
  testing::expect_error([] { dp_model_states(3, 4, Stage::kZero1, DType::kBF16); }, "--dp 4");
}

TEST(Presets, PublishedParameterCounts) {
  // Llama 2's released checkpoints (Touvron et al. 2023): exact element counts.
  EXPECT_EQ(parameters_of(preset("llama2-7b")).total, 6'738'415'616);
  EXPECT_EQ(parameters_of(preset("llama2-13b")).total, 13'015'864'320);
  EXPECT_EQ(parameters_of(preset("llama2-70b")).total, 68'976'648'192);
  // GPT-3 "175B" (Brown et al. 2020) counts 174.6e9 with embeddings.
  EXPECT_NEAR(parameters_of(preset("gpt3-175b")).total / 1e9, 174.6, 0.05);
  testing::expect_error([] { preset("gpt4"); }, {"--model", "gpt4", "llama2-7b"});
}

TEST(Presets, BookModelCountsLikeChapter4) {
  for (int layers : {1, 2, 3}) {
    for (int heads : {1, 2, 4}) {
      train::Config c;
      c.n_layer = layers, c.n_head = heads, c.d_model = 16 * heads * layers;
      c.vocab_size = 12 + layers, c.context = 7 + heads;
      EXPECT_EQ(parameters_of(from_book_config(c)).total, c.parameter_count())
          << layers << " layers, " << heads << " heads, d_model " << c.d_model;
    }
  }
}

Setup llama7b() {
  Setup s;
  s.shape = preset("llama2-7b");
  s.seq = 4096;
  return s;
}

// Issue 36: Stage(4), Recomputation(3) and Optimizer(2) were priced.
TEST(Calculator, EnumsOutsideTheirValuesAreRefused) {
  mem::Setup s = llama7b();
  s.parallel.stage = static_cast<zero::Stage>(4);
  book::testing::expect_error([&] { calculate(s); }, "zero::Stage(4) is not a value");
  s = llama7b();
  s.recompute = static_cast<Recomputation>(3);
  book::testing::expect_error([&] { calculate(s); }, "mem::Recomputation(3) is not a value");
  s = llama7b();
  s.optimizer = static_cast<Optimizer>(2);
  book::testing::expect_error([&] { calculate(s); }, "mem::Optimizer(2) is not a value");
}

TEST(Calculator, EightBitAdamIsTenBytesPerParameter) {
  mem::Setup s = llama7b();
  s.optimizer = Optimizer::kAdam8bit;
  const Breakdown b = calculate(s);
  const std::uint64_t psi = parameters_of(s.shape).total;
  const std::uint64_t blocks = (psi + kAdam8bitBlock - 1) / kAdam8bitBlock;
  EXPECT_EQ(b.parameters + b.gradients + b.optimizer_states(), 10 * psi + 8 * blocks);
  s.optimizer = Optimizer::kAdam;
  EXPECT_EQ(calculate(s).optimizer_states(), 12 * psi);
}

TEST(Calculator, ActivationsAreLayersTimesThePapersFormulaPlusEnds) {
  mem::Setup s = llama7b();
  s.micro_batch = 2;
  s.parallel.tp = 4;
  s.parallel.sequence_parallel = true;
  s.recompute = Recomputation::kSelective;
  const std::uint64_t sb = 4096ull * 2, h = 4096, v = 32000;
  // 34·sbh/t per layer, 32 layers; the embedding's dropout sbh/t; the output layer 4sb(h+v)/t.
  EXPECT_EQ(calculate(s).activations, 32 * (34 * sb * h / 4) + sb * h / 4 + 4 * sb * (h + v) / 4);
  // With 4 stages the first holds 4 micro-batches of 8 layers: the same 32 layers' worth, the
  // embedding mask four times, no output layer; and a send + receive buffer of sbh/t 16-bit values.
  s.parallel.pp = 4;
  const Breakdown b = calculate(s);
  EXPECT_EQ(b.activations, 32 * (34 * sb * h / 4) + 4 * sb * h / 4);
  EXPECT_EQ(b.communication, 2 * (sb * h / 4) * 2);
}

TEST(Calculator, SixteenToTwentyGigabytesPerBillionParameters) {
  // The rule of thumb: 16 bytes per parameter of model state, 16-20 GB per 1B parameters once
  // buffers and overhead are counted (activations apart). DDP over 8 GPUs, 1 GiB of overhead.
  for (const char* name : {"llama2-7b", "llama2-13b", "llama2-70b", "gpt3-175b"}) {
    mem::Setup s;
    s.shape = preset(name);
    s.parallel.dp = 8;
    s.overhead_bytes = std::uint64_t{1} << 30;
    const Breakdown b = calculate(s);
    const double psi = static_cast<double>(parameters_of(s.shape).total);
    const double gb_per_billion = static_cast<double>(b.total() - b.activations) / psi;
    EXPECT_GE(gb_per_billion, 16.0) << name;
    EXPECT_LE(gb_per_billion, 20.0) << name;
  }
}

TEST(Calculator, CommunicationBuffers) {
  mem::Setup s = llama7b();
  EXPECT_EQ(calculate(s).communication, 0u);  // one device
  s.parallel.dp = 8;
  EXPECT_EQ(calculate(s).communication, 2 * (s.bucket_bytes / 4) * 2);  // two bf16 buckets
  s.parallel.stage = Stage::kZero3;
  const ParameterBreakdown p = parameters_of(s.shape);
  EXPECT_EQ(calculate(s).communication,
            2 * (s.bucket_bytes / 4) * 2 + 2 * (p.layer_matrices + p.layer_norms) * 2);
  s.overhead_bytes = 12345;
  const Breakdown b = calculate(s);
  EXPECT_EQ(b.overhead, 12345u);
  EXPECT_EQ(b.total(), b.parameters + b.gradients + b.optimizer_states() + b.activations +
                           b.communication + b.overhead);
}

TEST(Calculator, ZeroThreeGathersOnlyTheTensorParallelShareOfALayer) {
  // Issue 19: with --tp 8 the two gathered layers were priced whole, 8x too much. Llama-2 7B
  // (h = 4096, 32 heads = 32 key/value heads, d_ff = 11008): a layer's matrices are
  // 2·4096² + 2·4096·4096 + 3·4096·11008 = 67,108,864 + 135,266,304 = 202,375,168; a tp rank
  // holds 202,375,168 / 8 = 25,296,896 of them and the 2·4096 = 8,192 norm gains, 25,305,088.
  // Two such layers in bf16: 2 · 25,305,088 · 2 = 101,220,352 B; plus two bf16 buckets of
  // 25 MiB / 4 = 6,553,600 elements, 26,214,400 B: 127,434,752 B.
  mem::Setup s = llama7b();
  s.parallel.dp = 8;
  s.parallel.tp = 8;
  s.parallel.stage = Stage::kZero3;
  EXPECT_EQ(calculate(s).communication, 127'434'752u);
  // The same per-layer share rank_parameters gives the rank (pp = 1: 32 layers and the split
  // embedding and head, 32,000 · 4096 each, and the final norm's 4096).
  const std::int64_t ends = (2 * 32'000 * 4096 + 4096 + 7) / 8;
  EXPECT_EQ(rank_parameters(s.shape, s.parallel), 32 * 25'305'088 + ends);
}

TEST(Calculator, ModelStatesOfAShapeBeyondAnyMachineAreRefused) {
  // Issue 19: a shape validate() accepts, with Ψ = 10^5 · (2^44 + 2^21) + 2·2^44 + 2^20 ≈ 1.8e18
  // parameters: 16 bytes each wrapped 64 bits. Refused by dp_model_states (above 2^59).
  ModelShape shape;
  shape.name = "huge";
  shape.n_layer = 100000;
  shape.d_model = 1 << 20;
  shape.d_ff = 1 << 22;
  shape.vocab_size = 1 << 24;
  shape.n_head = shape.n_kv_head = 1;
  shape.llama = true;
  EXPECT_NO_THROW(validate(shape));
  testing::expect_error([&] { zero_model_states(shape, {}, DType::kBF16); },
                        {"dp_model_states: ", "parameters is above 2^59"});
}

TEST(Calculator, HardwareFlopsWithFullRecomputationAreEightN) {
  const double n = 6.5e9;
  EXPECT_EQ(model_flops_per_token(n), 6 * n);
  EXPECT_EQ(hardware_flops_per_token(n, Recomputation::kNone), 6 * n);
  EXPECT_EQ(hardware_flops_per_token(n, Recomputation::kSelective), 6 * n);
  EXPECT_EQ(hardware_flops_per_token(n, Recomputation::kFull), 8 * n);
  // At equal step time, HFU = MFU · 8/6 under full recomputation.
  EXPECT_DOUBLE_EQ(hardware_flops_per_token(n, Recomputation::kFull) / model_flops_per_token(n),
                   4.0 / 3.0);
}

TEST(Calculator, JsonHasEveryCategoryInBytes) {
  mem::Setup s = llama7b();
  s.parallel.dp = 2;
  s.overhead_bytes = 7;
  const Breakdown b = calculate(s);
  const std::string json = to_json(b);
  for (const std::string key : {"parameters", "gradients", "optimizer_states", "activations",
                                "communication", "overhead", "total"})
    EXPECT_NE(json.find("\"" + key + "\": "), std::string::npos) << key << " missing: " << json;
  EXPECT_NE(json.find("\"total\": " + std::to_string(b.total()) + "}"), std::string::npos) << json;
  EXPECT_NE(json.find("\"optimizer_states\": " + std::to_string(b.optimizer_states())),
            std::string::npos)
      << json;
}

TEST(Calculator, BadSetupsNameTheFlag) {
  mem::Setup s = llama7b();
  s.parallel.tp = 6;
  testing::expect_error([&] { calculate(s); }, {"--tp 6", "32 heads"});
  s = llama7b();
  s.parallel.pp = 3;
  testing::expect_error([&] { calculate(s); }, {"--pp 3", "32 layers"});
  s = llama7b();
  s.seq = -1;
  testing::expect_error([&] { calculate(s); }, "--seq");
  s = llama7b();
  s.micro_batch = 0;
  testing::expect_error([&] { calculate(s); }, "--micro-batch");
  s = llama7b();
  s.parallel.dp = 1 << 21;
  testing::expect_error([&] { calculate(s); }, "--dp");
  s = llama7b();
  s.shape.d_model = 1 << 30;
  testing::expect_error([&] { calculate(s); }, "--d-model");
  s = llama7b();
  s.shape.n_layer = -4;
  testing::expect_error([&] { calculate(s); }, "--layers");
  s = llama7b();
  s.shape.n_kv_head = 5;
  testing::expect_error([&] { calculate(s); }, "--kv-heads 5");
  s = llama7b();
  s.parallel.sequence_parallel = true;
  testing::expect_error([&] { calculate(s); }, "--sequence-parallel");
  s = llama7b();
  s.seq = 1 << 24;
  s.micro_batch = 1 << 20;
  testing::expect_error([&] { calculate(s); }, {"--seq 16777216", "--micro-batch 1048576"});
  s = llama7b();
  s.shape.d_model = s.shape.d_ff = 1 << 20;
  s.shape.n_layer = 100000;
  testing::expect_error([&] { calculate(s); }, "beyond any machine");
  s = llama7b();
  s.precision = DType::kF64;
  testing::expect_error([&] { calculate(s); }, "f64");
  testing::expect_error([] { parse_recompute("some"); }, {"--recompute", "selective"});
  testing::expect_error([] { parse_optimizer("sgd"); }, {"--optimizer", "adam8bit"});
}

}  // namespace
}  // namespace book::mem
