// Rungs 1 and 2 of the ladder, the rung names, and the counts the tests pin.
#include "chapters/05_data_parallel/gradient_sync.h"

#include "common/check.h"

namespace book::ddp {

const char* rung_name(Rung rung) {
  switch (rung) {
    case Rung::kPerTensor:
      return "per-tensor";
    case Rung::kFlat:
      return "flat";
    case Rung::kBuckets:
      return "buckets";
    case Rung::kNoSync:
      return "no-sync";
  }
  return "?";
}

Rung parse_rung(std::string_view name) {
  for (Rung rung : all_rungs())
    if (name == rung_name(rung) || name == std::to_string(static_cast<int>(rung))) return rung;
  throw Error("unknown rung '" + std::string(name) +
              "' (valid: per-tensor, flat, buckets, no-sync, or 1..4)");
}

std::vector<Rung> all_rungs() {
  return {Rung::kPerTensor, Rung::kFlat, Rung::kBuckets, Rung::kNoSync};
}

bool overlaps_backward(Rung rung) { return rung == Rung::kBuckets || rung == Rung::kNoSync; }

std::vector<FlatRange> tensor_ranges(const train::ParameterLayout& layout) {
  std::vector<FlatRange> ranges;
  for (const train::TensorSlot& slot : layout.slots())
    ranges.push_back({slot.offset, slot.offset + slot.size()});
  return ranges;
}

//! [rungs_1_2]
std::int64_t all_reduce_per_tensor(coll::Communicator& comm, std::span<float> grads,
                                   std::span<const FlatRange> tensors, coll::Algorithm algorithm) {
  for (const FlatRange& tensor : tensors)  // one collective, one α, per tensor
    comm.all_reduce(grads.subspan(tensor.begin, tensor.size()), coll::ReduceOp::kAvg, algorithm);
  return static_cast<std::int64_t>(tensors.size());
}

std::int64_t all_reduce_flat(coll::Communicator& comm, std::span<float> grads,
                             coll::Algorithm algorithm) {
  comm.all_reduce(grads, coll::ReduceOp::kAvg, algorithm);  // one α, but only after backward
  return 1;
}
//! [rungs_1_2]

std::int64_t collectives_per_step(Rung rung, std::size_t tensors, std::size_t buckets,
                                  int accumulation) {
  BOOK_CHECK(accumulation >= 1, "accumulation must be >= 1, got " << accumulation);
  const auto a = static_cast<std::int64_t>(accumulation);
  switch (rung) {
    case Rung::kPerTensor:
      return a * static_cast<std::int64_t>(tensors);
    case Rung::kFlat:
      return a;
    case Rung::kBuckets:
      return a * static_cast<std::int64_t>(buckets);
    case Rung::kNoSync:
      return static_cast<std::int64_t>(buckets);
  }
  return 0;
}

std::uint64_t ring_all_reduce_bytes_all_ranks(std::size_t count, std::size_t element_bytes,
                                              int world) {
  BOOK_CHECK(world >= 1, "the world size must be >= 1, got " << world);
  return 2ull * static_cast<std::uint64_t>(world - 1) * count * element_bytes;
}

std::uint64_t ring_all_reduce_bytes_of_rank(std::size_t count, std::size_t element_bytes, int world,
                                            int rank) {
  BOOK_CHECK(world >= 1 && rank >= 0 && rank < world,
             "rank " << rank << " is outside a world of " << world);
  if (world == 1) return 0;
  return (2 * count - coll::shard_of(count, world, rank).count -
          coll::shard_of(count, world, (rank + 1) % world).count) *
         element_bytes;
}

}  // namespace book::ddp
