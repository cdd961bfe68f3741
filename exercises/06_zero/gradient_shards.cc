// Exercise zero.reduce_scatter_gradients — write reduce_scatter_bucket (declared in
// chapters/06_zero/gradient_shards.h): check that `piece` holds exactly
// coll::shard_of(grads.size(), comm.size(), comm.rank()).count elements of `wire` (a book::Error
// naming the rank, the expected and the given count and type otherwise); for kF32 reduce-scatter
// `grads` straight into `piece`; for kBF16/kF16 first train::encode `grads` into the front of
// `staging` (refuse a staging buffer that is too short) and reduce-scatter those 16-bit values.
// Always ReduceOp::kAvg and Algorithm::kRing.
// Graded by tests/06_zero/gradient_shards_test.cc:
//   bazel test --config=exercises //tests/06_zero:gradient_shards_test
#include "chapters/06_zero/gradient_shards.h"

#include "common/check.h"

namespace book::zero {

void reduce_scatter_bucket(coll::Communicator& comm, DType wire, std::span<const float> grads,
                           std::span<std::uint16_t> staging, coll::Buffer piece) {
  (void)comm, (void)wire, (void)grads, (void)staging, (void)piece;
  BOOK_NOT_IMPLEMENTED(
      "zero.reduce_scatter_gradients", "exercises/06_zero/gradient_shards.cc",
      "chapters/06_zero/README.md, section ZeRO-2: shard the gradients, during backward");
}

}  // namespace book::zero
