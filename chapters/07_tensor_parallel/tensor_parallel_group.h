/// @file
/// The bridge between the two earlier chapters: chapter 4's blocks talk through the small
/// interface TensorParallelComm (all-reduce, reduce-scatter, all-gather), and chapter 3's
/// Communicator implements collectives on threads, MPI processes or NCCL. TensorParallelGroup is
/// that interface over a Communicator — the tensor-parallel group of a ProcessGrid, say — and it
/// counts what it was asked to do, so tests and the stage can hold the traffic of each layer
/// against its formula.
#pragma once

#include <cstddef>
#include <cstdint>

#include "chapters/03_collectives/communicator.h"
#include "chapters/07_tensor_parallel/tensor_parallel_comm.h"

namespace book::tp {

/// The collectives one rank called through a TensorParallelGroup, with the element counts of
/// each kind. Elements are the logical size of the tensor a collective produces or consumes:
/// all-reduce its count, reduce-scatter its input (t shards), all-gather its output (t shards),
/// so a reduce-scatter + all-gather pair of N elements counts 2N, as an all-reduce of N does 1N.
struct CollectiveCounts {
  int all_reduces = 0;                        ///< calls of all_reduce
  int reduce_scatters = 0;                    ///< calls of reduce_scatter
  int all_gathers = 0;                        ///< calls of all_gather
  std::uint64_t all_reduce_elements = 0;      ///< Σ count over the all-reduces
  std::uint64_t reduce_scatter_elements = 0;  ///< Σ input count (t · count_per_rank)
  std::uint64_t all_gather_elements = 0;      ///< Σ output count (t · count_per_rank)

  /// Every call, of any kind.
  int calls() const { return all_reduces + reduce_scatters + all_gathers; }
  /// The counts since `earlier` (both from the same group).
  CollectiveCounts since(const CollectiveCounts& earlier) const;
};

/// TensorParallelComm over one rank's chapter-3 Communicator (not owned; it must outlive
/// the group). Every collective runs `algorithm` (the ring by default, so the bytes each rank
/// sends are the textbook 2(t−1)/t of an all-reduce and (t−1)/t of a reduce-scatter or an
/// all-gather, which the Communicator's counters then show exactly). Like the Communicator, one
/// thread at a time.
template <typename T>
class TensorParallelGroup final : public TensorParallelComm<T> {
 public:
  /// The group of `comm`'s ranks. `algorithm` is kRing (default), kNaive, or kNative on MPI and
  /// NCCL (chapter 3 refuses it on threads); kTree, kRingFused and kAutomatic change only the
  /// all-reduce (reduce-scatter and all-gather then run the ring).
  explicit TensorParallelGroup(coll::Communicator& comm,
                               coll::Algorithm algorithm = coll::Algorithm::kRing);

  int rank() const override { return comm_.rank(); }  ///< this rank, 0 … t−1
  int size() const override { return comm_.size(); }  ///< t
  /// Sum over ranks, in place (Communicator::all_reduce).
  void all_reduce(T* data, std::size_t count) override;
  /// This rank's block of the sum of every rank's `in` (Communicator::reduce_scatter).
  void reduce_scatter(const T* in, T* out, std::size_t count_per_rank) override;
  /// Every rank's `in`, in rank order (Communicator::all_gather).
  void all_gather(const T* in, T* out, std::size_t count_per_rank) override;

  /// What this rank has called since construction or reset_counts().
  const CollectiveCounts& counts() const { return counts_; }
  /// Zeroes the counts (the Communicator's byte counters are its own).
  void reset_counts() { counts_ = {}; }
  /// The Communicator underneath: its counters() hold the bytes this rank sent and received.
  coll::Communicator& communicator() { return comm_; }

 private:
  coll::Communicator& comm_;
  coll::Algorithm algorithm_;
  CollectiveCounts counts_;
};

/// A tensor-parallel group of one rank: every collective is a copy. What a model with t = 1 uses
/// when it is given no group, so one code path serves the one-device run.
template <typename T>
class LocalGroup final : public TensorParallelComm<T> {
 public:
  int rank() const override { return 0; }  ///< always 0
  int size() const override { return 1; }  ///< always 1
  /// The sum over one rank: nothing to do.
  void all_reduce(T*, std::size_t) override {}
  /// One rank's block is all of it: a copy.
  void reduce_scatter(const T* in, T* out, std::size_t count) override;
  /// One rank's block is all of it: a copy.
  void all_gather(const T* in, T* out, std::size_t count) override;
};

}  // namespace book::tp
