/// @file
/// The models this chapter serves: chapter 4's trained addition checkpoint (its answers can be
/// graded), and larger random-weight configurations for realistic lengths.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "chapters/04_training_baseline/config.h"
#include "chapters/04_training_baseline/model.h"

namespace book::kv {

/// A whole Model<float> with the weights of a checkpoint written by chapter 4's Trainer::save (the
/// `train` stage writes results/ch04_checkpoint.bin; this chapter's BUILD trains one as
/// addition_checkpoint.bin). Throws book::Error if the file is missing or not a checkpoint.
std::unique_ptr<train::Model<float>> load_checkpoint_model(const std::string& path);

/// A whole Model<float> of `config` with GPT-2's initialisation from `seed` (chapter 4's init):
/// random weights, for lengths and widths the addition model does not have.
std::unique_ptr<train::Model<float>> random_model(const train::Config& config, std::uint64_t seed);

/// The digits per operand of an addition model, from its context (3·digits + 2 positions: "a+b="
/// and the answer but its last digit). Throws book::Error if no digit count fits.
int addition_digits(const train::Config& config);

/// Held-out addition problems for an addition model: prompts "a+b=" of the validation split
/// (never trained on) and the sums they ask for. The one grader of chapters 10 and 14.
struct AdditionProblems {
  std::vector<std::vector<int>> prompts;  ///< "a+b=" as token ids, prompt_length() each
  std::vector<std::int64_t> sums;         ///< a + b, one per prompt
  int answer_tokens = 0;                  ///< tokens of an answer (digits + 1, reversed)
  /// Answers whose first answer_tokens tokens decode to the sum (AdditionTask::decode_answer).
  /// Throws book::Error if the counts differ or an answer is too short.
  int count_correct(std::span<const std::vector<int>> answers) const;
};

/// `count` problems drawn from the validation split with Rng(seed). Throws book::Error if the
/// model is not an addition model (addition_digits) or count < 1.
AdditionProblems held_out_additions(const train::Config& config, int count, std::uint64_t seed);

/// Finds a file that Bazel put in the runfiles of the running binary (a genrule's output listed in
/// its data), whether it runs under `bazel run`, `bazel test` or from bazel-bin: `path` relative
/// to the working directory, then under $RUNFILES_DIR, then next to the binary (`argv0` followed
/// by `.runfiles`), then under $TEST_SRCDIR. Returns the first that exists, or `path` unchanged.
std::string runfile(const std::string& path, const std::string& argv0 = "");

}  // namespace book::kv
