/// @file
/// The measurements behind the INT8 KV report (kv_int8_report.h), each on its own so the tests can
/// run them: the attention error on random data and on the trained model's own keys, values and
/// queries, and the addition model served through chapter 11's engine with either cache.
#pragma once

#include <cstdint>
#include <vector>

#include "chapters/04_training_baseline/data.h"
#include "chapters/04_training_baseline/model.h"
#include "chapters/10_paged_attention/kv_precision.h"
#include "chapters/14_quantization/kv_int8_report.h"

namespace book::quant {

/// INT8 kernel vs FP32 kernel on random keys, values and queries (normal, σ = 1, seeded) of one
/// layer with `n_head` heads of `head_dim`, `queries` queries of awkward context lengths (1 to
/// 300) on a paged cache of blocks of 16, the INT8 scales the data's own absmax (the best static
/// scales there are). Throws book::Error if a size is < 1.
KvErrorRow int8_attention_error_random(int n_head, int head_dim, int queries, std::uint64_t seed,
                                       int threads = 1);

/// The FP32 `model` run over `sequences` (teacher-forced) with every layer's attention computed
/// twice on the same keys, values and queries: by chapter 10's FP32 kernel (what the model goes
/// on with) and by the INT8 kernel on the keys and values quantised with `scales`. One row per
/// layer. Throws book::Error if the scales do not fit the model, or as calibrate_kv_int8 does on
/// bad sequences.
std::vector<KvErrorRow> int8_attention_error_model(train::Model<float>& model,
                                                   const kv::KvInt8Scales& scales,
                                                   const std::vector<std::vector<int>>& sequences,
                                                   int threads = 1);

/// Addition problems of one split: prompts "a+b=" and their sums.
struct AdditionProblems {
  std::vector<std::vector<int>> prompts;  ///< "a+b=" as token ids
  std::vector<std::int64_t> sums;         ///< a + b
  /// The whole examples, teacher-forced: prompt and answer, the model's context of them.
  std::vector<std::vector<int>> sequences;
  int answer_length = 0;  ///< tokens of an answer (digits of the sum)
};

/// `count` problems of `split` for an addition model of `config`, drawn with `seed`. Throws
/// book::Error if count < 1 or the config is no addition model's.
AdditionProblems addition_problems(const train::Config& config, int count, train::Split split,
                                   std::uint64_t seed);

/// Whole sequences (prompt and answer, teacher-forced; the model's context of them) of `count`
/// training-split problems: what the scales are calibrated on.
std::vector<std::vector<int>> addition_calibration(const train::Config& config, int count,
                                                   std::uint64_t seed);

/// What the engine answered.
struct EngineAnswers {
  KvAccuracyRow row;                     ///< graded (equal_to_fp32 left 0)
  std::vector<std::vector<int>> tokens;  ///< each problem's generated tokens, in order
};

/// Serves `problems` greedily through chapter 11's engine (32 running, 64 rows a step, a cache of
/// 40 blocks of 2 that forces preemption by recompute, as chapter 11's stage does) with an FP32
/// cache (`scales` null) or an INT8 one with `scales`, and grades the answers.
EngineAnswers serve_addition(train::Model<float>& model, const AdditionProblems& problems,
                             const kv::KvInt8Scales* scales, int threads = 1);

}  // namespace book::quant
