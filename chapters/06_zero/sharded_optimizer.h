/// @file
/// The optimizer step of a rank that owns only pieces of the flat buffer (ZeRO-1 and -2). AdamW
/// is element-wise, so a rank that holds the mean gradient, the FP32 master weights and Adam's
/// moments of its pieces updates them exactly as a one-device AdamW would (chapter 4's
/// AdamWState covers any range). The one thing that is not element-wise is global-norm clipping:
/// the norm is over all Ψ gradients, which no rank holds, so each rank sums the squares of its
/// pieces and one all-reduce of a single FP64 number gives every rank the same total, hence the
/// same clip factor.
#pragma once

#include <span>

#include "chapters/03_collectives/communicator.h"
#include "chapters/04_training_baseline/adamw_state.h"
#include "chapters/04_training_baseline/optimizer.h"
#include "chapters/04_training_baseline/parameters.h"
#include "chapters/05_data_parallel/buckets.h"

namespace book::zero {

/// Exercise zero.shard_optimizer_step: clip by the global norm, then AdamW, over this rank's
/// pieces. For each piece i: `pieces[i]` is its range of the flat buffer (`layout`'s
/// coordinates), `master[i]` its FP32 weights and `grads[i]` its mean gradients (both
/// pieces[i].size() elements), `states[i]` its AdamWState (begin/end equal to pieces[i]).
/// 1. Check that the four spans have the same length and every piece's spans match its size and
///    state; throw book::Error naming the piece otherwise.
/// 2. sum = Σ_i train::sum_of_squares(grads[i]) (FP64); if `shard_group` is not null (the pieces
///    are shards: stages 1–2), all-reduce it there (ReduceOp::kSum) so every rank has the sum
///    over all Ψ elements. Null: the pieces are the whole buffer (stage 0).
/// 3. factor = train::clip_coefficient(sum, clip_norm); train::scale_gradients(grads[i], factor)
///    and train::adamw_update(layout, states[i], master[i], grads[i], lr, config) for every i.
/// Returns the global norm before clipping, √sum.
/// \exercise{zero.shard_optimizer_step}
double shard_optimizer_step(coll::Communicator* shard_group, const train::ParameterLayout& layout,
                            std::span<const ddp::FlatRange> pieces,
                            std::span<const std::span<float>> master,
                            std::span<const std::span<float>> grads,
                            std::span<train::AdamWState> states, float lr,
                            const train::AdamWConfig& config, float clip_norm);

}  // namespace book::zero
