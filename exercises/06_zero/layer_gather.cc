// Exercise zero.gather_layer_parameters — write gather_layer_parameters (declared in
// chapters/06_zero/layer_gather.h): refuse a piece whose type is not f32, bf16 or f16 (a
// book::Error naming the type: an f64 piece would overflow the 16-bit staging); check that
// `piece` holds exactly
// coll::shard_of(full.size(), comm.size(), comm.rank()).count elements (a book::Error naming the
// rank, the expected and the given count otherwise); for a kF32 piece all-gather it straight
// into `full`; for kBF16/kF16 all-gather into the front of `staging` (refuse a staging buffer
// that is too short) and train::decode those 16-bit values into `full`. Always
// Algorithm::kRing.
// Graded by tests/06_zero/zero3_test.cc:
//   bazel test --config=exercises //tests/06_zero:zero3_test
#include "chapters/06_zero/layer_gather.h"

#include "common/check.h"

namespace book::zero {

void gather_layer_parameters(coll::Communicator& comm, coll::ConstBuffer piece,
                             std::span<std::uint16_t> staging, std::span<float> full) {
  (void)comm, (void)piece, (void)staging, (void)full;
  BOOK_NOT_IMPLEMENTED("zero.gather_layer_parameters", "exercises/06_zero/layer_gather.cc",
                       "chapters/06_zero/README.md, section ZeRO-3: shard the parameters too");
}

}  // namespace book::zero
