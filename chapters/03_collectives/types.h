/// @file
/// What a collective moves: typed views of buffers (FP32, FP64, BF16, FP16: the book's DType from
/// common/dtype.h), reduction operators, the algorithm names, and how a buffer of `count`
/// elements is cut into one shard per rank.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "common/dtype.h"

namespace book::coll {

/// How elements from different ranks are combined.
enum class ReduceOp {
  kSum,  ///< The element-wise sum.
  kAvg,  ///< The sum divided by the group size (what data-parallel training does to gradients).
  kMax,  ///< The element-wise maximum.
};

/// "sum", "avg" or "max".
const char* op_name(ReduceOp op);
/// Throws book::Error unless `op` is a ReduceOp value (common/enum_check.h), naming `where`.
void check_reduce_op(ReduceOp op, const char* where);

/// Which algorithm a collective runs.
enum class Algorithm {
  kAutomatic,  ///< Tree below the communicator's tree_threshold_bytes(), ring from there on.
  kRing,       ///< The ring (exercises coll.ring_*): bandwidth-optimal.
  kTree,       ///< Binomial trees: ⌈log2 N⌉ levels, latency-optimal.
  kNaive,      ///< Everything to rank 0 and back: the baseline.
  kNative,     ///< The backend's own library (MPI_Allreduce, ncclAllReduce); MPI and NCCL only.
  kRingFused,  ///< The ring with each receive and reduce fused into one pass (all_reduce only).
};

/// The name printed in messages and tables: "automatic", "ring", "tree", "naive", "native" or
/// "ring_fused".
const char* algorithm_name(Algorithm algorithm);
/// Throws book::Error unless `algorithm` is an Algorithm value, naming `where`.
void check_algorithm(Algorithm algorithm, const char* where);

/// A mutable, non-owning view of `count` elements of type `dtype`. Built from a std::span of
/// float, double, BFloat16 or Half so that the type can't be mistaken.
struct Buffer {
  void* data = nullptr;       ///< First element (host memory; device memory on the NCCL backend).
  std::size_t count = 0;      ///< Number of elements.
  DType dtype = DType::kF32;  ///< Element type.

  Buffer() = default;
  /// A view of FP32 elements.
  Buffer(std::span<float> s) : data(s.data()), count(s.size()), dtype(DType::kF32) {}
  /// A view of FP64 elements.
  Buffer(std::span<double> s) : data(s.data()), count(s.size()), dtype(DType::kF64) {}
  /// A view of BF16 elements.
  Buffer(std::span<BFloat16> s) : data(s.data()), count(s.size()), dtype(DType::kBF16) {}
  /// A view of FP16 elements.
  Buffer(std::span<Half> s) : data(s.data()), count(s.size()), dtype(DType::kF16) {}
  /// A raw view, e.g. of device memory.
  Buffer(void* d, std::size_t n, DType t) : data(d), count(n), dtype(t) {}

  /// Size in bytes.
  std::size_t bytes() const { return count * dtype_size(dtype); }
  /// Elements [offset, offset + n) as a buffer of the same type (unchecked).
  Buffer slice(std::size_t offset, std::size_t n) const {
    return {static_cast<char*>(data) + offset * dtype_size(dtype), n, dtype};
  }
};

/// A read-only view, the input side of Buffer. Every Buffer converts to it.
struct ConstBuffer {
  const void* data = nullptr;  ///< First element.
  std::size_t count = 0;       ///< Number of elements.
  DType dtype = DType::kF32;   ///< Element type.

  ConstBuffer() = default;
  /// A read-only view of a mutable buffer.
  ConstBuffer(const Buffer& b) : data(b.data), count(b.count), dtype(b.dtype) {}
  /// A view of FP32 elements.
  ConstBuffer(std::span<const float> s) : data(s.data()), count(s.size()), dtype(DType::kF32) {}
  /// A view of FP64 elements.
  ConstBuffer(std::span<const double> s) : data(s.data()), count(s.size()), dtype(DType::kF64) {}
  /// A view of BF16 elements.
  ConstBuffer(std::span<const BFloat16> s) : data(s.data()), count(s.size()), dtype(DType::kBF16) {}
  /// A view of FP16 elements.
  ConstBuffer(std::span<const Half> s) : data(s.data()), count(s.size()), dtype(DType::kF16) {}
  /// A raw view.
  ConstBuffer(const void* d, std::size_t n, DType t) : data(d), count(n), dtype(t) {}

  /// Size in bytes.
  std::size_t bytes() const { return count * dtype_size(dtype); }
  /// Elements [offset, offset + n) as a buffer of the same type (unchecked).
  ConstBuffer slice(std::size_t offset, std::size_t n) const {
    return {static_cast<const char*>(data) + offset * dtype_size(dtype), n, dtype};
  }
};

/// One rank's part of a buffer: elements [offset, offset + count).
struct Shard {
  std::size_t offset = 0;  ///< First element of the shard.
  std::size_t count = 0;   ///< Number of elements in it.
};

/// How every collective in the book cuts `count` elements into `parts` shards: the first
/// `count % parts` shards get one element more than the others, so shards differ by at most one
/// element and some are empty when count < parts. Shard i is rank i's part in reduce_scatter and
/// all_gather and the i-th chunk of the ring. Requires parts ≥ 1 and 0 ≤ index < parts.
Shard shard_of(std::size_t count, int parts, int index);

/// dst[i] = op(dst[i], src[i]) for every element, computed in FP32 (in FP64 for FP64) and rounded
/// once to the buffer's type (kAvg adds here; the division by the group size is a separate
/// scale()). Requires the same count and type.
void reduce_into(Buffer dst, ConstBuffer src, ReduceOp op);

/// data[i] *= factor, computed in FP32 with the factor rounded to FP32 (in FP64 for FP64), and
/// rounded once. For a mean pass 1.0 / n: rounded to FP32 it is exactly 1.0f / n for every n
/// below 2^22, and FP64 buffers get the exact quotient.
void scale(Buffer data, double factor);

/// Copies src into dst (same count and type).
void copy_into(Buffer dst, ConstBuffer src);

}  // namespace book::coll
