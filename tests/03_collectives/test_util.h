// Shared helpers of chapter 3's tests: seeded per-rank inputs, double-precision references,
// buffers of any of the three types, and the exact ring volumes.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "chapters/03_collectives/communicator.h"
#include "chapters/03_collectives/threads.h"
#include "common/check.h"
#include "common/rng.h"

namespace book::coll::testing {

inline const std::vector<int> kWorldSizes = {1, 2, 3, 4, 5, 8};

// Counts N does not divide, counts below N, and a few round ones.
inline std::vector<std::size_t> awkward_counts(int n) {
  std::vector<std::size_t> counts = {1, 7, 64, 1000, 1037};
  if (n > 2) counts.push_back(static_cast<std::size_t>(n - 1));  // fewer elements than ranks
  counts.push_back(static_cast<std::size_t>(n) * 13);            // divides evenly
  return counts;
}

// A buffer of `count` elements of `dtype`, held as bytes, readable as doubles.
class TypedBuffer {
 public:
  TypedBuffer(std::size_t count, DType dtype)
      : count_(count), dtype_(dtype), bytes_(count * dtype_size(dtype) + 1) {}
  Buffer view() { return {bytes_.data(), count_, dtype_}; }
  std::size_t size() const { return count_; }
  double get(std::size_t i) const {
    switch (dtype_) {
      case DType::kF32:
        return reinterpret_cast<const float*>(bytes_.data())[i];
      case DType::kBF16:
        return to_float(reinterpret_cast<const BFloat16*>(bytes_.data())[i]);
      case DType::kF16:
        return to_float(reinterpret_cast<const Half*>(bytes_.data())[i]);
    }
    return 0;
  }
  void set(std::size_t i, double v) {
    const auto f = static_cast<float>(v);
    switch (dtype_) {
      case DType::kF32:
        reinterpret_cast<float*>(bytes_.data())[i] = f;
        break;
      case DType::kBF16:
        reinterpret_cast<BFloat16*>(bytes_.data())[i] = to_bf16(f);
        break;
      case DType::kF16:
        reinterpret_cast<Half*>(bytes_.data())[i] = to_half(f);
        break;
    }
  }
  void poison() {
    for (std::size_t i = 0; i < count_; ++i) set(i, std::numeric_limits<double>::quiet_NaN());
  }

 private:
  std::size_t count_;
  DType dtype_;
  std::vector<std::byte> bytes_;
};

// Rank r's input: uniform in [-1, 1) from seed (seed, r), rounded to the type.
inline TypedBuffer rank_input(std::size_t count, DType dtype, int rank, std::uint64_t seed) {
  TypedBuffer b(count, dtype);
  Rng rng(seed * 1000 + static_cast<std::uint64_t>(rank));
  for (std::size_t i = 0; i < count; ++i) b.set(i, rng.uniform(-1.0, 1.0));
  return b;
}

// The reduction over n ranks' inputs, in double from the already-rounded inputs.
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

// The error bound: one rounding per ring step of a partial result at most n in magnitude.
inline double tolerance(DType dtype, int n) {
  const double unit = dtype == DType::kF32    ? 0x1.0p-24
                      : dtype == DType::kBF16 ? 0x1.0p-8
                                              : 0x1.0p-11;
  return 4.0 * n * n * unit + 1e-7;
}

// Checks elements [begin, end) of `actual` against `expected`; reports the first mismatch only.
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

// Elements rank r sends in a ring reduce-scatter: every chunk but its own.
inline std::uint64_t ring_rs_sent(std::size_t count, int n, int r) {
  return count - shard_of(count, n, r).count;
}
// Elements rank r sends in a ring all-gather: every chunk but chunk r+1's.
inline std::uint64_t ring_ag_sent(std::size_t count, int n, int r) {
  return count - shard_of(count, n, (r + 1) % n).count;
}

inline std::string label(int n, std::size_t count, DType dtype, ReduceOp op) {
  return "N=" + std::to_string(n) + " count=" + std::to_string(count) + " " + dtype_name(dtype) +
         " " + op_name(op);
}

// Runs fn and expects a book::Error whose message contains every one of `needles`. A stub's
// NotImplemented passes through (so the graded test reads as a skip, never as a pass).
inline void expect_error(const std::function<void()>& fn, const std::vector<std::string>& needles) {
  try {
    fn();
  } catch (const NotImplemented&) {
    throw;
  } catch (const Error& e) {
    const std::string message = e.what();
    for (const auto& needle : needles)
      EXPECT_NE(message.find(needle), std::string::npos)
          << "the error message lacks \"" << needle << "\": " << message;
    return;
  }
  ADD_FAILURE() << "expected a book::Error, nothing was thrown";
}

}  // namespace book::coll::testing
