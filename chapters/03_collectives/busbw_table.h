/// @file
/// The arithmetic of nccl-tests' performance table, shared by the threads and MPI stages.
///
/// nccl-tests (github.com/NVIDIA/nccl-tests, doc/PERFORMANCE.md) reports two bandwidths for a
/// collective that took time t on S bytes: algbw = S / t, what the caller sees, and
/// busbw = algbw × the collective's bus factor, which for all-reduce is 2(N−1)/N: the bytes each
/// rank must move through its slowest link in the best algorithm. busbw can be compared with the
/// hardware's link bandwidth whatever N is; algbw cannot.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace book::coll {

/// S / t in GB/s (10^9 bytes per second, as nccl-tests).
double algbw_gbs(std::size_t bytes, double seconds);

/// The all-reduce bus factor 2(N−1)/N (1 for N = 1, where nothing moves).
double all_reduce_bus_factor(int ranks);

/// "1 KiB", "64 MiB", …
std::string format_bytes(std::size_t bytes);

/// The largest message size_sweep() accepts: 1 TiB, far beyond any stage's memory, but a bound.
inline constexpr std::size_t kMaxSweepBytes = std::size_t{1} << 40;

/// Message sizes min_bytes, ×`step`, … up to the last one ≤ `max_bytes`.
/// @throws book::Error for min_bytes < 1, step < 2, or max_bytes outside [min_bytes, 1 TiB].
std::vector<std::size_t> size_sweep(std::size_t min_bytes, std::size_t max_bytes, int step);

/// How many timed repetitions make about `budget_bytes` of traffic: at least 1, at most 200.
int repetitions_for(std::size_t bytes, std::size_t budget_bytes);

/// Single-thread memcpy bandwidth on `bytes`-byte buffers, S / t in GB/s (the copy reads S and
/// writes S), median of `repeats` copies after a warm-up.
double memcpy_gbs(std::size_t bytes, int repeats);

}  // namespace book::coll
