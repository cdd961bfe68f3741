// The reference zero.shard_optimizer_step.
#include "chapters/06_zero/sharded_optimizer.h"

#include <cmath>

#include "chapters/04_training_baseline/clipping.h"
#include "common/check.h"

namespace book::zero {

//! [shard_optimizer_step]
double shard_optimizer_step(coll::Communicator* shard_group, const train::ParameterLayout& layout,
                            std::span<const ddp::FlatRange> pieces,
                            std::span<const std::span<float>> master,
                            std::span<const std::span<float>> grads,
                            std::span<train::AdamWState> states, float lr,
                            const train::AdamWConfig& config, float clip_norm) {
  BOOK_CHECK(master.size() == pieces.size() && grads.size() == pieces.size() &&
                 states.size() == pieces.size(),
             "shard_optimizer_step: " << pieces.size() << " pieces but " << master.size()
                                      << " master spans, " << grads.size() << " gradient spans and "
                                      << states.size() << " Adam states");
  double sum = 0;
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    const ddp::FlatRange& p = pieces[i];
    BOOK_CHECK(master[i].size() == p.size() && grads[i].size() == p.size() &&
                   states[i].begin() == p.begin && states[i].end() == p.end,
               "shard_optimizer_step: piece "
                   << i << " is [" << p.begin << ", " << p.end << ") but its weights hold "
                   << master[i].size() << ", its gradients " << grads[i].size()
                   << " and its Adam state covers [" << states[i].begin() << ", " << states[i].end()
                   << ")");
    sum += train::sum_of_squares(grads[i]);
  }
  // The norm is over all Ψ gradients: every rank adds its pieces, one FP64 all-reduce adds ranks.
  if (shard_group != nullptr)
    shard_group->all_reduce(std::span<double>(&sum, 1), coll::ReduceOp::kSum);
  const float factor = train::clip_coefficient(sum, clip_norm);
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    train::scale_gradients(grads[i], factor);
    train::adamw_update(layout, states[i], master[i], grads[i], lr, config);
  }
  return std::sqrt(sum);
}
//! [shard_optimizer_step]

}  // namespace book::zero
