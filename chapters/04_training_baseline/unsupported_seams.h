/// @file
/// TrainOptions carries three seams chapter 4's Trainer honours (memory_seams.h): what a block
/// keeps for the backward (`activation_policy`), the attention kernel (`attention`) and the
/// optimizer (`optimizer`). A trainer of a later chapter that does not implement one must refuse
/// it, naming it: a run with chapter 9's 8-bit Adam or recomputation set on a data-parallel run
/// that silently trains with plain AdamW and everything kept measures the wrong thing (issue 36).
#pragma once

#include "chapters/04_training_baseline/trainer.h"
#include "common/check.h"

namespace book::train {

/// Throws book::Error naming the first of `options`' seams that is set: `trainer` (e.g.
/// "DdpTrainer") implements none of them.
inline void refuse_unsupported_seams(const TrainOptions& options, const char* trainer) {
  BOOK_CHECK(!options.optimizer,
             trainer << " runs its own AdamW (its state replicated or sharded across the ranks) "
                        "and does not take TrainOptions::optimizer; leave it empty, or train "
                        "with chapter 4's Trainer");
  BOOK_CHECK(!options.activation_policy,
             trainer << " keeps every block's activations and does not take "
                        "TrainOptions::activation_policy (recomputation); leave it empty, or "
                        "train with chapter 4's Trainer");
  BOOK_CHECK(options.attention == nullptr,
             trainer << " runs chapter 4's attention and does not take TrainOptions::attention; "
                        "leave it null, or train with chapter 4's Trainer");
}

}  // namespace book::train
