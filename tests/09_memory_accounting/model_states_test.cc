// Graded: mem.zero_model_states. One rank of a DP × TP × PP grid: 16 bytes per parameter on one
// device in mixed precision (8 + 8 in FP32), the ZeRO paper's per-rank formulas for a real
// model at N = 64, GPT-3's rank at t = 8, p = 8 (hand-counted), chapter 6's exact formula for the
// data-parallel shard, and degrees that do not divide refused.
#include "chapters/09_memory_accounting/model_states.h"

#include <gtest/gtest.h>

#include <cmath>

#include "chapters/09_memory_accounting/dp_states.h"
#include "common/testing/exercise.h"
#include "common/testing/expect_error.h"

namespace book::mem {
namespace {

using zero::Stage;

EXERCISE_TEST("mem.zero_model_states", ZeroModelStates, SixteenBytesPerParameterOnOneDevice) {
  for (const char* name : {"llama2-7b", "gpt3-175b", "book"}) {
    const ModelShape shape = preset(name);
    const std::uint64_t psi = static_cast<std::uint64_t>(parameters_of(shape).total);
    const Parallelism one;
    EXPECT_EQ(rank_parameters(shape, one), static_cast<std::int64_t>(psi)) << name;
    const zero::ModelStateBytes mixed = zero_model_states(shape, one, DType::kBF16);
    EXPECT_EQ(mixed.parameters, 2 * psi) << name;
    EXPECT_EQ(mixed.gradients, 2 * psi) << name;
    EXPECT_EQ(mixed.master_weights, 4 * psi) << name;
    EXPECT_EQ(mixed.optimizer_states, 8 * psi) << name;
    EXPECT_EQ(mixed.total(), 16 * psi) << name;
    EXPECT_EQ(zero_model_states(shape, one, DType::kF32).total(), 16 * psi) << name;
  }
}

EXERCISE_TEST("mem.zero_model_states", ZeroModelStates, StagesFollowThePaperAtN64) {
  // Rajbhandari et al. 2020, Fig. 1: (2+2+K)Ψ, 2Ψ+2Ψ+KΨ/N, 2Ψ+(2+K)Ψ/N, (2+2+K)Ψ/N, K = 12;
  // the exact shard ⌈Ψ/N⌉ is at most one element above Ψ/N, so at most 16 bytes above.
  const ModelShape shape = preset("llama2-7b");
  const double psi = static_cast<double>(parameters_of(shape).total);
  for (Stage stage : {Stage::kDdp, Stage::kZero1, Stage::kZero2, Stage::kZero3}) {
    Parallelism par;
    par.dp = 64;
    par.stage = stage;
    const double got = static_cast<double>(zero_model_states(shape, par, DType::kBF16).total());
    const double paper = zero::paper_bytes_per_rank(stage, psi, 64);
    EXPECT_GE(got, paper - 1e-3) << zero::stage_name(stage);
    EXPECT_LE(got, paper + 16) << zero::stage_name(stage) << ": got " << got << ", paper " << paper;
  }
}

EXERCISE_TEST("mem.zero_model_states", ZeroModelStates, Gpt3RankOfTensorAndPipelineGrid) {
  // 12 of 96 layers; a layer's matrices + biases 12h² + 9h split over 8, its two LayerNorms 4h
  // whole; the embedding (50257 + 2048)·h over 8 is larger than the final LayerNorm.
  const ModelShape shape = preset("gpt3-175b");
  Parallelism par;
  par.tp = 8, par.pp = 8;
  const std::int64_t h = 12288;
  const std::int64_t expected = 12 * ((12 * h * h + 9 * h) / 8 + 4 * h) + (50257 + 2048) * h / 8;
  EXPECT_EQ(rank_parameters(shape, par), expected);
  EXPECT_EQ(expected, 2799005184);
  par.dp = 16;
  par.stage = Stage::kZero1;
  EXPECT_EQ(zero_model_states(shape, par, DType::kBF16),
            zero::model_state_bytes(Stage::kZero1, DType::kBF16, expected, (expected + 15) / 16));
}

EXERCISE_TEST("mem.zero_model_states", ZeroModelStates, ShardsAtEveryStageUseChapter6) {
  const ModelShape shape = preset("llama2-13b");
  for (int dp : {1, 3, 8}) {
    for (Stage stage : {Stage::kDdp, Stage::kZero1, Stage::kZero2}) {
      Parallelism par;
      par.dp = dp, par.tp = 2, par.pp = 4, par.stage = stage;
      const std::int64_t psi = rank_parameters(shape, par);
      const std::uint64_t owned = stage == Stage::kDdp ? psi : (psi + dp - 1) / dp;
      EXPECT_EQ(zero_model_states(shape, par, DType::kF16),
                zero::model_state_bytes(stage, DType::kF16, psi, owned))
          << "dp " << dp << " " << zero::stage_name(stage);
    }
  }
}

EXERCISE_TEST("mem.zero_model_states", ZeroModelStates, DegreesThatDoNotDivideAreRefused) {
  const ModelShape shape = preset("llama2-7b");  // 32 heads, 32 layers
  Parallelism par;
  par.tp = 3;
  testing::expect_error([&] { rank_parameters(shape, par); }, {"--tp 3", "32 heads"});
  par.tp = 1, par.pp = 5;
  testing::expect_error([&] { zero_model_states(shape, par, DType::kBF16); },
                        {"--pp 5", "32 layers"});
}

}  // namespace
}  // namespace book::mem
