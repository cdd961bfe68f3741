/// @file
/// Which activations a model's forward pass keeps for its backward pass (Korthikanti et al.,
/// "Reducing Activation Recomputation in Large Transformer Models", 2022, §4–5): one vocabulary for
/// the policy that recomputes in chapter 4's model (recomputation_policy.h) and for the formulas
/// that count what it keeps (activation_memory.h, calculator.h). A header of its own, with no
/// dependencies, so a calculator can name a policy without linking the model.
#pragma once

namespace book::mem {

/// What a block keeps, and so what its backward pass recomputes.
enum class Recomputation {
  /// Every block keeps everything (the default).
  kNone,
  /// Every block keeps everything but what its attention core saves for the backward (the
  /// B·h·T·T probabilities of layers.h's attention): one block's worth is held, written by the
  /// forward and rewritten from the block's q, k, v just before that block's backward.
  kSelective,
  /// Only the residual stream at each block's input is kept (it is kept anyway): one block's
  /// activations are held, and each block's forward is run again, from its input, just before its
  /// backward. One extra forward per step.
  kFull,
};

/// "none", "selective" or "full".
constexpr const char* recomputation_name(Recomputation recomputation) {
  switch (recomputation) {
    case Recomputation::kNone:
      return "none";
    case Recomputation::kSelective:
      return "selective";
    case Recomputation::kFull:
      return "full";
  }
  return "?";
}

}  // namespace book::mem
