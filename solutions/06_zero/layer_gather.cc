// The reference zero.gather_layer_parameters.
#include "chapters/06_zero/layer_gather.h"

#include "chapters/04_training_baseline/mixed_precision.h"
#include "common/check.h"

namespace book::zero {

//! [gather_layer_parameters]
void gather_layer_parameters(coll::Communicator& comm, coll::ConstBuffer piece,
                             std::span<std::uint16_t> staging, std::span<float> full) {
  // Any other type would be all-gathered into 16-bit staging as wider elements: an overflow.
  BOOK_CHECK(
      piece.dtype == DType::kF32 || piece.dtype == DType::kBF16 || piece.dtype == DType::kF16,
      "gather_layer_parameters: the piece's type is " << dtype_name(piece.dtype)
                                                      << "; give an f32, bf16 or f16 piece");
  const coll::Shard mine = coll::shard_of(full.size(), comm.size(), comm.rank());
  BOOK_CHECK(piece.count == mine.count, "gather_layer_parameters: rank "
                                            << comm.rank() << "'s piece must hold " << mine.count
                                            << " elements (shard_of(" << full.size() << ", "
                                            << comm.size() << ", " << comm.rank() << ")), got "
                                            << piece.count);
  if (piece.dtype == DType::kF32) {
    comm.all_gather(piece, coll::Buffer(full), coll::Algorithm::kRing);
    return;
  }
  BOOK_CHECK(staging.size() >= full.size(),
             "gather_layer_parameters: the 16-bit staging buffer holds "
                 << staging.size() << " elements, the layer " << full.size());
  const std::span<std::uint16_t> bits = staging.first(full.size());
  comm.all_gather(piece, coll::Buffer(bits.data(), bits.size(), piece.dtype),
                  coll::Algorithm::kRing);
  train::decode(piece.dtype, bits, full);  // the CPU computes in FP32
}
//! [gather_layer_parameters]

}  // namespace book::zero
