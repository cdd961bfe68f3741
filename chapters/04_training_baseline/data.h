/// @file
/// The synthetic language: multi-digit addition, "123+456=" followed by the sum's digits
/// written least significant first ("975" for 579), so each answer digit depends only on digits
/// already seen plus a carry (as in minGPT's addition demo). Nothing to download; a test can
/// grade every answer.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/rng.h"

namespace book::train {

/// Which half of the problems: validation pairs are never drawn for training.
enum class Split {
  kTrain,       ///< about 90% of the (a, b) pairs
  kValidation,  ///< the other ~10%, chosen by a hash of (a, b)
};

/// A batch of B sequences: tokens [B, T] and next-token targets [B, T], -1 where not graded.
struct Batch {
  int batch = 0;             ///< B
  int seq_len = 0;           ///< T
  std::vector<int> tokens;   ///< model input
  std::vector<int> targets;  ///< tokens shifted by one; -1 on the prompt (only the sum is learned)
};

/// Addition of two `digits`-digit numbers (zero-padded) with a character tokenizer:
/// '0'..'9' → 0..9, '+' → 10, '=' → 11.
class AdditionTask {
 public:
  /// Operands of `digits` digits, 1 to 6.
  explicit AdditionTask(int digits);

  int digits() const { return digits_; }                 ///< digits per operand
  static constexpr int vocab_size() { return 12; }       ///< tokens in the vocabulary
  int prompt_length() const { return 2 * digits_ + 2; }  ///< "a+b=" in tokens
  int answer_length() const { return digits_ + 1; }      ///< digits of the sum
  int sequence_length() const { return prompt_length() + answer_length(); }  ///< whole example
  int model_context() const { return sequence_length() - 1; }  ///< positions the model reads

  /// The whole example "a+b=" + reversed sum, as token ids.
  std::vector<int> encode(std::int64_t a, std::int64_t b) const;
  /// Token ids → text, e.g. "123+456=975".
  static std::string to_text(const std::vector<int>& tokens);
  /// Whether (a, b) belongs to the validation split (a fixed hash, the same on every machine).
  bool is_validation(std::int64_t a, std::int64_t b) const;
  /// Draws (a, b) uniformly from `split` with `rng`.
  std::pair<std::int64_t, std::int64_t> sample(Rng& rng, Split split) const;
  /// B examples of `split` drawn with `rng`, as model input and targets of model_context() tokens.
  Batch batch(Rng& rng, Split split, int batch) const;
  /// Decodes the reversed answer digits back into the sum; -1 if a token is not a digit.
  static std::int64_t decode_answer(const int* answer_tokens, int count);

 private:
  int digits_;
  std::int64_t limit_;  // 10^digits
};

}  // namespace book::train
