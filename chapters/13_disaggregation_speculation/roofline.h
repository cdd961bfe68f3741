/// @file
/// Why prefill and decode differ, on the reader's machine: one linear layer y = x · W, run with
/// chapter 1's sgemm for m = 1, 2, 4, … tokens against the same weights W (k × n), placed on the
/// machine's measured roofline (chapter 1's FMA peak and triad bandwidth).
///
/// A step of m tokens does 2·m·k·n FLOPs and moves at least 4·(k·n + m·k + m·n) bytes (FP32: the
/// weights once, the activations in and out). While m is small the weights dominate the bytes,
/// so the intensity is ≈ m/2 FLOP per byte and the step takes the time of reading W whatever m is:
/// decode (one token per sequence per step) is bandwidth-bound. Past the ridge, peak / bandwidth
/// FLOP per byte, the step is compute-bound and its time grows with m: prefill.
#pragma once

#include <vector>

namespace book::roofline {

/// The machine's ceilings, measured on `threads` threads.
struct Ceilings {
  double peak_gflops = 0;    ///< FP32 FMA peak, AVX2 or AVX-512 whichever is higher (chapter 1)
  double bandwidth_gbs = 0;  ///< STREAM triad (chapter 1's measure_triad_bandwidth_gbs)
  /// The ridge point: the intensity (FLOP/byte) where bandwidth · intensity reaches the peak.
  double ridge() const { return peak_gflops / bandwidth_gbs; }
  /// min(peak, bandwidth · intensity): the most a step of this intensity can reach.
  double attainable(double intensity) const;
};

/// Measures both ceilings (a second or two). Throws book::Error if threads < 1.
Ceilings measure_ceilings(int threads);

/// FLOPs of a linear layer over m tokens: 2·m·k·n.
double linear_flops(int m, int n, int k);
/// The least bytes it must move, FP32: 4·(k·n + m·k + m·n).
double linear_bytes(int m, int n, int k);

/// The smallest m at which a k × n layer's intensity reaches the ridge (the roofline's knee, in
/// tokens per step); 0 if no m up to `max_m` does.
int ridge_tokens(int n, int k, const Ceilings& ceilings, int max_m = 1 << 20);

/// One measured step.
struct Point {
  int m = 0;               ///< tokens in the step
  double intensity = 0;    ///< FLOP per byte (linear_flops / linear_bytes)
  double seconds = 0;      ///< median time of one sgemm call
  double gflops = 0;       ///< achieved
  double attainable = 0;   ///< the roofline at this intensity
  double bytes_per_s = 0;  ///< linear_bytes / seconds: the bandwidth the step drew
};

/// Times sgemm for each m in `ms` (median of `repeats` calls after a warm-up) on fresh random
/// inputs. Throws book::Error if n, k or any m < 1, or repeats < 1.
std::vector<Point> measure_linear(int n, int k, const std::vector<int>& ms, int repeats,
                                  const Ceilings& ceilings);

/// The largest m whose step took at most `slack` times the fastest step measured: the tokens that
/// ride along with the weights' read for (nearly) free. The measured knee.
int free_ride_tokens(const std::vector<Point>& points, double slack = 1.5);

}  // namespace book::roofline
