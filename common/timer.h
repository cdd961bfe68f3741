/// @file
/// Wall-clock timing for stages (benchmarks use Google Benchmark instead).
#pragma once

#include <algorithm>
#include <chrono>
#include <utility>
#include <vector>

#include "common/check.h"

namespace book {

/// A steady-clock stopwatch that starts when constructed.
class Timer {
 public:
  Timer() : start_(std::chrono::steady_clock::now()) {}
  /// Restarts the stopwatch.
  void reset() { start_ = std::chrono::steady_clock::now(); }
  /// Seconds since construction or the last reset().
  double seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  std::chrono::steady_clock::time_point start_;
};

/// The median of `values` (the upper one of the middle two for an even count). Throws
/// book::Error when there is none.
inline double median(std::vector<double> values) {
  BOOK_CHECK(!values.empty(), "median of no values (nothing was measured)");
  std::nth_element(values.begin(), values.begin() + values.size() / 2, values.end());
  return values[values.size() / 2];
}

/// How far apart the fastest and the slowest of `values` are, as a fraction of their median:
/// (max − min) / median. 0.1 means the repetitions spread over 10% of the median. Throws
/// book::Error when there is no value.
inline double relative_spread(const std::vector<double>& values) {
  BOOK_CHECK(!values.empty(), "spread of no values (nothing was measured)");
  const auto [low, high] = std::minmax_element(values.begin(), values.end());
  return (*high - *low) / median(values);
}

/// Runs `fn` once to warm up, then `repeats` times, and returns the median time in seconds.
/// The median, not the mean: one preempted run on a busy laptop must not move the number.
template <typename Fn>
double median_seconds(Fn&& fn, int repeats) {
  fn();
  std::vector<double> times;
  times.reserve(repeats);
  for (int i = 0; i < repeats; ++i) {
    Timer timer;
    fn();
    times.push_back(timer.seconds());
  }
  return median(std::move(times));
}

}  // namespace book
