// Exercise zero.shard_optimizer_step — write shard_optimizer_step (declared in
// chapters/06_zero/sharded_optimizer.h): check that pieces, master, grads and states have one
// entry per piece and that each entry's sizes match its piece (a book::Error naming the piece
// otherwise); add train::sum_of_squares of every gradient piece in FP64; all-reduce that sum on
// `shard_group` when it is not null; clip with train::clip_coefficient / train::scale_gradients
// and update every piece with train::adamw_update; return the norm before clipping.
// Graded by tests/06_zero/sharded_optimizer_test.cc:
//   bazel test --config=exercises //tests/06_zero:sharded_optimizer_test
#include "chapters/06_zero/sharded_optimizer.h"

#include "common/check.h"

namespace book::zero {

double shard_optimizer_step(coll::Communicator* shard_group, const train::ParameterLayout& layout,
                            std::span<const ddp::FlatRange> pieces,
                            std::span<const std::span<float>> master,
                            std::span<const std::span<float>> grads,
                            std::span<train::AdamWState> states, float lr,
                            const train::AdamWConfig& config, float clip_norm) {
  (void)shard_group, (void)layout, (void)pieces, (void)master, (void)grads, (void)states, (void)lr,
      (void)config, (void)clip_norm;
  BOOK_NOT_IMPLEMENTED("zero.shard_optimizer_step", "exercises/06_zero/sharded_optimizer.cc",
                       "chapters/06_zero/README.md, section ZeRO-1: shard the optimizer");
}

}  // namespace book::zero
