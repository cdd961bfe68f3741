/// @file
/// The parts of the train stage (train.cc) that can be tested without training: its command
/// line, and what its numbers allow it to claim. A 10-step run must not print "well above
/// chance" next to 0.0%, nor "the model learns" next to a loss that did not fall.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/dtype.h"

namespace book::train {

/// The train stage's command line.
struct StageArgs {
  bool tour = false;              ///< --tour: 2-digit addition in 800 steps
  std::int64_t steps = 3000;      ///< --steps: optimizer steps, 10 … 10^8
  int digits = 3;                 ///< --digits: digits per operand, 1 … 6
  int threads = 0;                ///< --threads: sgemm's threads (0 = all hardware threads)
  DType precision = DType::kF32;  ///< --precision: f32, bf16 or f16
};

/// Parses the stage's flags (the arguments after the program's name) with book::Flags.
/// @throws book::UsageError for a bad command line; book::HelpRequested for `--help`.
StageArgs parse_stage_args(const std::vector<std::string>& arguments);

/// Whether `accuracy` (a fraction of `examples` answers) is well above `chance` (the fraction a
/// uniform guess gets right): at least 10 times chance and at least 10 right answers, so that one
/// lucky guess is never called learning.
bool well_above_chance(double accuracy, double chance, int examples);

/// Whether the validation loss fell by at least 10% from `initial` to `final` (both finite).
bool loss_fell(double initial, double final);

/// The tour's words for an accuracy: "well above chance (0.01%)", or, when it is not,
/// "not above chance (0.01%) after N steps: train longer (--steps 3000)".
std::string accuracy_verdict(double accuracy, double chance, int examples, std::int64_t steps);

/// The tour's words for the loss: "the loss falls: the model learns", or "the loss did not fall
/// after N steps: train longer (--steps 3000)".
std::string loss_verdict(double initial, double final, std::int64_t steps);

}  // namespace book::train
