/// @file
/// A seeded random-number generator whose streams are identical on every platform.
///
/// The standard distributions (std::uniform_real_distribution, …) may differ between standard
/// libraries; the book needs the same numbers everywhere (a test input, a training run), so the
/// conversions from bits to numbers are written here.
#pragma once

#include <cmath>
#include <cstdint>
#include <span>

namespace book {

/// xoshiro256** seeded through splitmix64: small, fast, and good enough for tests and training.
class Rng {
 public:
  /// Seeds the generator; the same seed gives the same stream on every machine.
  explicit Rng(std::uint64_t seed = 0) { reseed(seed); }

  /// Restarts the stream from `seed`.
  void reseed(std::uint64_t seed) {
    for (auto& word : state_) {
      seed += 0x9e3779b97f4a7c15ULL;
      std::uint64_t z = seed;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
      word = z ^ (z >> 31);
    }
  }

  /// 64 random bits.
  std::uint64_t next_u64() {
    const std::uint64_t result = rotl(state_[1] * 5, 7) * 9;
    const std::uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = rotl(state_[3], 45);
    return result;
  }

  /// Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

  /// Uniform in [lo, hi).
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }

  /// Uniform integer in [lo, hi] (inclusive). Requires lo <= hi.
  std::int64_t uniform_int(std::int64_t lo, std::int64_t hi) {
    const std::uint64_t span = static_cast<std::uint64_t>(hi - lo) + 1;
    if (span == 0) return static_cast<std::int64_t>(next_u64());  // the full 64-bit range
    // Rejection sampling removes the modulo bias.
    const std::uint64_t limit = UINT64_MAX - UINT64_MAX % span;
    std::uint64_t x;
    do {
      x = next_u64();
    } while (x >= limit);
    return lo + static_cast<std::int64_t>(x % span);
  }

  /// Standard normal (Box–Muller), deterministic across platforms given the libm.
  double normal() {
    const double u1 = 1.0 - uniform();  // in (0, 1]
    const double u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }

  /// The full internal state (for checkpoints).
  std::span<const std::uint64_t, 4> state() const { return state_; }
  /// Restores a state from state().
  void set_state(std::span<const std::uint64_t, 4> s) {
    for (int i = 0; i < 4; ++i) state_[i] = s[i];
  }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t state_[4] = {};
};

/// Fills `out` with uniform values in [lo, hi).
template <typename T>
void fill_uniform(std::span<T> out, Rng& rng, double lo = -1.0, double hi = 1.0) {
  for (auto& x : out) x = static_cast<T>(rng.uniform(lo, hi));
}

}  // namespace book
