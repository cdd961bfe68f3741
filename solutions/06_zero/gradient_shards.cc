// The reference zero.reduce_scatter_gradients.
#include "chapters/06_zero/gradient_shards.h"

#include "chapters/04_training_baseline/mixed_precision.h"
#include "common/check.h"

namespace book::zero {

//! [reduce_scatter_bucket]
void reduce_scatter_bucket(coll::Communicator& comm, DType wire, std::span<const float> grads,
                           std::span<std::uint16_t> staging, coll::Buffer piece) {
  const coll::Shard mine = coll::shard_of(grads.size(), comm.size(), comm.rank());
  BOOK_CHECK(piece.count == mine.count && piece.dtype == wire,
             "reduce_scatter_bucket: rank "
                 << comm.rank() << "'s piece must hold " << mine.count << " x " << dtype_name(wire)
                 << " (shard_of(" << grads.size() << ", " << comm.size() << ", " << comm.rank()
                 << ")), got " << piece.count << " x " << dtype_name(piece.dtype));
  if (wire == DType::kF32) {
    comm.reduce_scatter(coll::ConstBuffer(grads), piece, coll::ReduceOp::kAvg,
                        coll::Algorithm::kRing);
    return;
  }
  BOOK_CHECK(staging.size() >= grads.size(),
             "reduce_scatter_bucket: the 16-bit staging buffer holds "
                 << staging.size() << " elements, the bucket " << grads.size());
  const std::span<std::uint16_t> bits = staging.first(grads.size());
  train::encode(wire, grads, bits);  // what a GPU's 16-bit gradient buffer would hold
  comm.reduce_scatter(coll::ConstBuffer(bits.data(), bits.size(), wire), piece,
                      coll::ReduceOp::kAvg, coll::Algorithm::kRing);
}
//! [reduce_scatter_bucket]

}  // namespace book::zero
