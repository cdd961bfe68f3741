/// @file
/// Test helpers for code that talks through a Communicator (chapter 3's tests, and chapters 5–8's):
/// seeded per-rank inputs in any buffer type, double-precision references of their reduction,
/// the tolerance of a ring, the exact ring volumes, and runs of N thread ranks that hand back what
/// each rank computed. Test-only: `//chapters/03_collectives/testing` (testonly = True).
///
/// \code
/// // Every rank all-reduces its own seeded input; compare with the reference in double.
/// const auto expected = reference(1037, DType::kBF16, 4, /*seed=*/7, ReduceOp::kSum);
/// run_ranks(4, [&](Communicator& comm) {
///   TypedBuffer data = rank_input(1037, DType::kBF16, comm.rank(), 7);
///   comm.all_reduce(data.view(), ReduceOp::kSum);
///   expect_close(data, expected, 0, 1037, tolerance(DType::kBF16, 4), "bf16 sum");
/// });
/// \endcode
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "chapters/03_collectives/communicator.h"
#include "chapters/03_collectives/threads.h"
#include "common/check.h"
#include "common/rng.h"

/// Chapter 3's test helpers (test-only).
namespace book::coll::testing {

/// The world sizes chapter 3's tests sweep: 1 (nothing moves), 2, powers of two and odd sizes.
inline const std::vector<int> kWorldSizes = {1, 2, 3, 4, 5, 8};

/// Element counts that catch off-by-one shards for `n` ranks: counts n does not divide, counts
/// below n (empty shards), and one that divides evenly.
inline std::vector<std::size_t> awkward_counts(int n) {
  std::vector<std::size_t> counts = {1, 7, 64, 1000, 1037};
  if (n > 2) counts.push_back(static_cast<std::size_t>(n - 1));  // fewer elements than ranks
  counts.push_back(static_cast<std::size_t>(n) * 13);            // divides evenly
  return counts;
}

/// A buffer of `count` elements of `dtype` (owned), readable and writable as doubles.
class TypedBuffer {
 public:
  /// `count` elements of `dtype`, zero bits (poison() them, or set() every one).
  TypedBuffer(std::size_t count, DType dtype)
      : count_(count), dtype_(dtype), bytes_(count * dtype_size(dtype) + 1) {}
  /// The buffer as a collective's argument.
  Buffer view() { return {bytes_.data(), count_, dtype_}; }
  /// The buffer as a read-only argument.
  ConstBuffer view() const { return {bytes_.data(), count_, dtype_}; }
  /// Number of elements.
  std::size_t size() const { return count_; }
  /// The element type.
  DType dtype() const { return dtype_; }
  /// Element `i`, converted exactly to double.
  double get(std::size_t i) const {
    switch (dtype_) {
      case DType::kF32:
        return load<float>(i);
      case DType::kF64:
        return load<double>(i);
      case DType::kBF16:
        return to_float(load<BFloat16>(i));
      case DType::kF16:
        return to_float(load<Half>(i));
    }
    return NAN;
  }
  /// Sets element `i` to `value`, rounded to the buffer's type (through FP32, but for FP64).
  void set(std::size_t i, double value) {
    const auto f = static_cast<float>(value);
    switch (dtype_) {
      case DType::kF32:
        store(i, f);
        break;
      case DType::kF64:
        store(i, value);
        break;
      case DType::kBF16:
        store(i, to_bf16(f));
        break;
      case DType::kF16:
        store(i, to_half(f));
        break;
    }
  }
  /// Every element becomes NaN, so an element a collective forgot to write shows.
  void poison() {
    for (std::size_t i = 0; i < count_; ++i) set(i, std::numeric_limits<double>::quiet_NaN());
  }
  /// All elements as FP32 (exact for every type but FP64).
  std::vector<float> floats() const {
    std::vector<float> out(count_);
    for (std::size_t i = 0; i < count_; ++i) out[i] = static_cast<float>(get(i));
    return out;
  }

 private:
  template <typename T>
  T load(std::size_t i) const {
    T value;
    std::memcpy(&value, bytes_.data() + i * sizeof(T), sizeof(T));
    return value;
  }
  template <typename T>
  void store(std::size_t i, T value) {
    std::memcpy(bytes_.data() + i * sizeof(T), &value, sizeof(T));
  }
  std::size_t count_;
  DType dtype_;
  std::vector<std::byte> bytes_;
};

/// Rank `rank`'s input: `count` values uniform in [-1, 1) from the seed (seed, rank), rounded to
/// `dtype`. Never zeros; different on every rank; the same on every machine.
inline TypedBuffer rank_input(std::size_t count, DType dtype, int rank, std::uint64_t seed) {
  TypedBuffer b(count, dtype);
  Rng rng(seed * 1000 + static_cast<std::uint64_t>(rank));
  for (std::size_t i = 0; i < count; ++i) b.set(i, rng.uniform(-1.0, 1.0));
  return b;
}

/// The reduction `op` over `n` ranks' rank_input(count, dtype, r, seed), computed in double from
/// the already-rounded inputs: what an exact collective would return.
inline std::vector<double> reference(std::size_t count, DType dtype, int n, std::uint64_t seed,
                                     ReduceOp op) {
  std::vector<double> out(count, op == ReduceOp::kMax ? -INFINITY : 0.0);
  for (int r = 0; r < n; ++r) {
    const TypedBuffer in = rank_input(count, dtype, r, seed);
    for (std::size_t i = 0; i < count; ++i)
      out[i] = op == ReduceOp::kMax ? std::max(out[i], in.get(i)) : out[i] + in.get(i);
  }
  if (op == ReduceOp::kAvg)
    for (auto& x : out) x /= n;
  return out;
}

/// The error bound of a reduction of rank_input values over `n` ranks in `dtype`: one rounding
/// per step of a partial result at most n in magnitude, 4n² units in the last place.
inline double tolerance(DType dtype, int n) {
  const double unit = dtype == DType::kF32    ? 0x1.0p-24
                      : dtype == DType::kF64  ? 0x1.0p-53
                      : dtype == DType::kBF16 ? 0x1.0p-8
                                              : 0x1.0p-11;
  return 4.0 * n * n * unit + (dtype == DType::kF64 ? 1e-15 : 1e-7);
}

/// Adds a failure unless elements [begin, end) of `actual` are within `tol` of `expected`; the
/// message names `what`, the first mismatching element, both values and the tolerance.
inline void expect_close(const TypedBuffer& actual, const std::vector<double>& expected,
                         std::size_t begin, std::size_t end, double tol, const std::string& what) {
  for (std::size_t i = begin; i < end; ++i) {
    if (!(std::fabs(actual.get(i) - expected[i]) <= tol)) {
      ADD_FAILURE() << what << ": element " << i << " of " << actual.size() << " is "
                    << actual.get(i) << ", expected " << expected[i] << " (tolerance " << tol
                    << "); first mismatch shown";
      return;
    }
  }
}

/// Elements rank `r` of `n` sends in a ring reduce-scatter of `count`: every chunk but its own.
inline std::uint64_t ring_rs_sent(std::size_t count, int n, int r) {
  return count - shard_of(count, n, r).count;
}
/// Elements rank `r` of `n` sends in a ring all-gather of `count`: every chunk but (r+1) mod n.
inline std::uint64_t ring_ag_sent(std::size_t count, int n, int r) {
  return count - shard_of(count, n, (r + 1) % n).count;
}

/// "N=4 count=1037 bf16 sum": the case, for failure messages.
inline std::string label(int n, std::size_t count, DType dtype, ReduceOp op) {
  return "N=" + std::to_string(n) + " count=" + std::to_string(count) + " " + dtype_name(dtype) +
         " " + op_name(op);
}

/// Runs `body` on `world_size` thread ranks (run_ranks) and returns what each rank's body
/// returned, indexed by world rank: `auto sums = collect_ranks(4, [](Communicator& c) { ... });`.
/// The result type must be default-constructible and not bool (ranks write their slots at once).
template <typename Body>
auto collect_ranks(int world_size, Body&& body, const ThreadsOptions& options = {}) {
  using Result = std::invoke_result_t<Body&, Communicator&>;
  static_assert(!std::is_same_v<Result, bool>, "collect_ranks: return int, not bool");
  std::vector<Result> results(world_size > 0 ? world_size : 0);
  run_ranks(
      world_size, [&](Communicator& comm) { results[comm.rank()] = body(comm); }, options);
  return results;
}

/// Adds a failure unless every rank's values equal rank 0's bit for bit (NaNs included): the
/// check that replicas stay identical (after a ring all-reduce, a DDP step). Names the first rank
/// and element that differ.
inline void expect_identical_on_every_rank(const std::vector<std::vector<float>>& per_rank,
                                           const std::string& what) {
  for (std::size_t r = 1; r < per_rank.size(); ++r) {
    if (per_rank[r].size() != per_rank[0].size()) {
      ADD_FAILURE() << what << ": rank " << r << " has " << per_rank[r].size()
                    << " values, rank 0 has " << per_rank[0].size();
      continue;
    }
    for (std::size_t i = 0; i < per_rank[r].size(); ++i) {
      if (std::memcmp(&per_rank[r][i], &per_rank[0][i], sizeof(float)) != 0) {
        ADD_FAILURE() << what << ": element " << i << " is " << per_rank[r][i] << " on rank " << r
                      << " but " << per_rank[0][i] << " on rank 0 (first difference shown)";
        break;
      }
    }
  }
}

}  // namespace book::coll::testing
