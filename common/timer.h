/// @file
/// Wall-clock timing for stages (benchmarks use Google Benchmark instead).
#pragma once

#include <algorithm>
#include <chrono>
#include <vector>

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
  std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
  return times[times.size() / 2];
}

}  // namespace book
