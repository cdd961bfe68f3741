/// @file
/// How good a quantised addition model is, measured against its FP32 self: the task's exact-sum
/// accuracy on held-out problems (greedy answers, graded by chapter 10's grader), and over the
/// answer positions of the held-out sequences (teacher-forced: the prompt and the right answer),
/// the KL divergence of the quantised next-token distribution from the FP32 one and how often
/// their top-1 tokens agree. Logit error alone is not a measure: a small error that flips an
/// answer digit matters, a large one in a position nobody reads does not.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "chapters/04_training_baseline/model.h"
#include "chapters/10_paged_attention/model_runner.h"
#include "chapters/10_paged_attention/served_model.h"

namespace book::quant {

/// Held-out problems and their whole sequences.
struct EvalSet {
  kv::AdditionProblems problems;            ///< prompts and sums (chapter 10's grader)
  std::vector<std::vector<int>> sequences;  ///< prompt + right answer, the model's context long
};

/// `count` held-out problems drawn with `seed` (kv::held_out_additions). Throws book::Error if
/// the model is not an addition model or count < 1.
EvalSet make_eval_set(const train::Config& config, int count, std::uint64_t seed);

/// `count` sequences (prompt + right answer) of the training split, drawn with `seed`: what
/// calibration runs on (never the held-out problems).
std::vector<std::vector<int>> calibration_sequences(const train::Config& config, int count,
                                                    std::uint64_t seed);

/// The logits of every position of every sequence, [Σ lengths][vocab], computed through a
/// kv::ModelRunner with `linear` as its projections (empty: the model's FP32 weights), 64
/// sequences a step. Throws book::Error if a sequence is empty or longer than the context.
std::vector<float> teacher_forced_logits(train::Model<float>& model,
                                         std::span<const std::vector<int>> sequences,
                                         const kv::ModelRunner::LayerLinear& linear = {});

/// One scheme's quality.
struct Quality {
  int correct = 0;   ///< held-out problems answered exactly
  int problems = 0;  ///< held-out problems asked
  double kl = 0;     ///< mean KL(FP32 ‖ quantised) over answer positions, nats
  double top1 = 0;   ///< fraction of answer positions whose argmax agrees with FP32's
  /// correct / problems (0 when no problems were asked)
  double accuracy() const { return problems ? static_cast<double>(correct) / problems : 0; }
};

/// Serves `set` with `linear` (empty: FP32): greedy answers through kv::generate_paged, graded;
/// KL and top-1 against `reference` = teacher_forced_logits(model, set.sequences) of FP32.
/// Throws book::Error if reference has the wrong size or the logits are not finite.
Quality evaluate(train::Model<float>& model, const EvalSet& set,
                 const kv::ModelRunner::LayerLinear& linear, std::span<const float> reference);

}  // namespace book::quant
