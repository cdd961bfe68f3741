/// @file
/// The ladder of gradient synchronisation, each rung a function or an object a data-parallel step
/// calls after (or during) backward. Every rung leaves every rank with the mean of all ranks'
/// gradients, bit-identical on every rank (chapter 3's ring ends with the same bits everywhere);
/// they differ in how many collectives they start, and when.
///
/// | rung | what | collectives per optimizer step (A micro-batches) |
/// |---|---|---|
/// | 1 per-tensor | one blocking all-reduce per parameter tensor, after backward | A × tensors |
/// | 2 flat | one blocking all-reduce of the whole flat gradient, after backward | A |
/// | 3 buckets | buckets launched from the gradient-ready hook, overlapping backward | A × buckets
/// | | 4 no-sync | rung 3, but only on the last micro-batch (PyTorch's `no_sync()`) | buckets |
///
/// Bytes sent per rank: with the ring every rung moves 2(N−1)/N of what it all-reduces per
/// collective (exactly 2·count − shard(r) − shard(r+1) elements for rank r; summed over the ranks
/// exactly 2(N−1)·count), so rungs 1–3 move A times the gradient per step and rung 4 moves it once.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "chapters/03_collectives/communicator.h"
#include "chapters/04_training_baseline/parameters.h"
#include "chapters/05_data_parallel/buckets.h"

namespace book::ddp {

/// The rungs of the ladder.
enum class Rung {
  kPerTensor = 1,  ///< one all-reduce per tensor, after backward
  kFlat = 2,       ///< one all-reduce of the flat buffer, after backward
  kBuckets = 3,    ///< buckets overlapped with backward, every micro-batch
  kNoSync = 4,     ///< buckets overlapped with backward, last micro-batch only
};

/// "per-tensor", "flat", "buckets" or "no-sync".
const char* rung_name(Rung rung);

/// The rung called `name` (a rung_name, or its number "1".."4"); throws book::Error listing them.
Rung parse_rung(std::string_view name);

/// All four, in order.
std::vector<Rung> all_rungs();

/// Whether the rung starts its collectives from the gradient-ready hook (3 and 4).
bool overlaps_backward(Rung rung);

/// Every tensor of `layout` as a range of the flat buffer, in buffer order (what plan_buckets and
/// all_reduce_per_tensor take).
std::vector<FlatRange> tensor_ranges(const train::ParameterLayout& layout);

/// Rung 1: one blocking all-reduce (mean over ranks) per tensor range of `grads`. Returns the
/// number of collectives started (= tensors.size()).
std::int64_t all_reduce_per_tensor(coll::Communicator& comm, std::span<float> grads,
                                   std::span<const FlatRange> tensors,
                                   coll::Algorithm algorithm = coll::Algorithm::kRing);

/// Rung 2: one blocking all-reduce (mean over ranks) of the whole of `grads`. Returns 1.
std::int64_t all_reduce_flat(coll::Communicator& comm, std::span<float> grads,
                             coll::Algorithm algorithm = coll::Algorithm::kRing);

/// The collectives one optimizer step of `rung` starts, by the table above.
std::int64_t collectives_per_step(Rung rung, std::size_t tensors, std::size_t buckets,
                                  int accumulation);

/// Bytes all N ranks together send in one ring all-reduce of `count` elements of
/// `element_bytes`: exactly 2(N−1)·count·element_bytes (so the mean per rank is 2(N−1)/N of the
/// buffer); rank r alone sends (2·count − shard(r) − shard(r+1))·element_bytes.
std::uint64_t ring_all_reduce_bytes_all_ranks(std::size_t count, std::size_t element_bytes,
                                              int world);

/// What rank `rank` alone sends in that all-reduce.
std::uint64_t ring_all_reduce_bytes_of_rank(std::size_t count, std::size_t element_bytes, int world,
                                            int rank);

}  // namespace book::ddp
