// bazel run -c opt //chapters/12_dynamic_programming:bench
//
// Brute force against the DP (your code with --config=exercises) on representative problems.
// Each pair shares its small sizes, so the ratio at the largest shared size is measured in one run;
// the DP then continues to realistic sizes. ->Complexity() fits the running time: the DPs with
// Google Benchmark's automatic choice (O(N), O(N^2), O(N log N), ...), the brute forces with the
// exponential they are expected to follow (the RMS says how well it fits).
#include <benchmark/benchmark.h>

#include <cmath>
#include <string>
#include <vector>

#include "chapters/12_dynamic_programming/brute_force.h"
#include "chapters/12_dynamic_programming/dp.h"
#include "common/check.h"
#include "common/rng.h"

namespace book::dynprog {
namespace {

std::string letters(std::int64_t n, int alphabet, std::uint64_t seed) {
  Rng rng(seed);
  std::string out;
  for (std::int64_t i = 0; i < n; ++i)
    out += static_cast<char>('a' + rng.uniform_int(0, alphabet - 1));
  return out;
}

std::vector<int> numbers(std::int64_t n, int lo, int hi, std::uint64_t seed) {
  Rng rng(seed);
  std::vector<int> out(n);
  for (auto& x : out) x = static_cast<int>(rng.uniform_int(lo, hi));
  return out;
}

// Runs `fn` in the benchmark loop; a stub's NotImplemented skips the benchmark with its message.
template <typename Fn>
void measure(benchmark::State& state, Fn&& fn) {
  try {
    benchmark::DoNotOptimize(fn());
  } catch (const NotImplemented& e) {
    state.SkipWithError(e.what());
    return;
  }
  for (auto _ : state) benchmark::DoNotOptimize(fn());
  state.SetComplexityN(state.range(0));
}

double two_to_the(benchmark::IterationCount n) { return std::pow(2.0, static_cast<double>(n)); }
// The plain edit-distance recursion on mismatches calls itself three times; its call count grows
// like the central Delannoy numbers, about (3 + 2·sqrt(2))^N = 5.83^N.
double delannoy(benchmark::IterationCount n) { return std::pow(5.828427, static_cast<double>(n)); }
double cube(benchmark::IterationCount n) { return std::pow(static_cast<double>(n), 3.0); }

// LeetCode 115: N = |s|, |t| = N/3, two letters.
void BM_115_brute(benchmark::State& state) {
  const auto s = letters(state.range(0), 2, 1), t = letters(state.range(0) / 3, 2, 2);
  measure(state, [&] { return brute::num_distinct(s, t); });
}
void BM_115_dp(benchmark::State& state) {
  const auto s = letters(state.range(0), 2, 1), t = letters(state.range(0) / 3, 2, 2);
  measure(state, [&] { return num_distinct(s, t); });
}
BENCHMARK(BM_115_brute)->DenseRange(12, 22, 2)->Complexity(two_to_the);
BENCHMARK(BM_115_dp)->DenseRange(12, 22, 2)->RangeMultiplier(2)->Range(64, 4096)->Complexity();

// LeetCode 1143: N = |text1| = |text2|, four letters.
void BM_1143_brute(benchmark::State& state) {
  const auto a = letters(state.range(0), 4, 3), b = letters(state.range(0), 4, 4);
  measure(state, [&] { return brute::longest_common_subsequence(a, b); });
}
void BM_1143_dp(benchmark::State& state) {
  const auto a = letters(state.range(0), 4, 3), b = letters(state.range(0), 4, 4);
  measure(state, [&] { return longest_common_subsequence(a, b); });
}
BENCHMARK(BM_1143_brute)->DenseRange(10, 20, 2)->Complexity(two_to_the);
BENCHMARK(BM_1143_dp)->DenseRange(10, 20, 2)->RangeMultiplier(2)->Range(64, 8192)->Complexity();

// LeetCode 300: N values in [0, 10^6).
void BM_300_brute(benchmark::State& state) {
  const auto v = numbers(state.range(0), 0, 999999, 5);
  measure(state, [&] { return brute::length_of_lis(v); });
}
void BM_300_dp(benchmark::State& state) {
  const auto v = numbers(state.range(0), 0, 999999, 5);
  measure(state, [&] { return length_of_lis(v); });
}
BENCHMARK(BM_300_brute)->DenseRange(10, 20, 2)->Complexity(two_to_the);
BENCHMARK(BM_300_dp)->DenseRange(10, 20, 2)->RangeMultiplier(4)->Range(64, 1 << 18)->Complexity();

// LeetCode 416: N values in [1, 100] (so the capacity grows with N too: O(N · sum) = O(N^2)).
// The last value is made larger than all the others together (beyond LeetCode's 100, which no
// solution here relies on) with the total even: no partition exists, and neither side can stop
// early.
std::vector<int> no_partition(std::int64_t n) {
  auto v = numbers(n, 1, 100, 6);
  int rest = 0;
  for (std::size_t i = 0; i + 1 < v.size(); ++i) rest += v[i];
  v.back() = rest + 2;  // total 2·rest + 2: even, and the half (rest + 1) is out of reach
  return v;
}
void BM_416_brute(benchmark::State& state) {
  const auto v = no_partition(state.range(0));
  measure(state, [&] { return brute::can_partition(v); });
}
void BM_416_dp(benchmark::State& state) {
  const auto v = no_partition(state.range(0));
  measure(state, [&] { return can_partition(v); });
}
BENCHMARK(BM_416_brute)->DenseRange(10, 20, 2)->Complexity(two_to_the);
BENCHMARK(BM_416_dp)->DenseRange(10, 20, 2)->RangeMultiplier(2)->Range(32, 2048)->Complexity();

// LeetCode 322: N = amount, coins {3, 7, 11}. The brute force's call count T(N) = 1 + T(N-3) +
// T(N-7) + T(N-11) grows like x^N with x^11 = x^8 + x^4 + 1, x = 1.19824.
const std::vector<int> kCoins{3, 7, 11};
void BM_322_brute(benchmark::State& state) {
  const int amount = static_cast<int>(state.range(0));
  measure(state, [&] { return brute::coin_change(kCoins, amount); });
}
void BM_322_dp(benchmark::State& state) {
  const int amount = static_cast<int>(state.range(0));
  measure(state, [&] { return coin_change(kCoins, amount); });
}
BENCHMARK(BM_322_brute)->DenseRange(30, 60, 6)->Complexity([](benchmark::IterationCount n) {
  return std::pow(1.19824, static_cast<double>(n));
});
BENCHMARK(BM_322_dp)->DenseRange(30, 60, 6)->RangeMultiplier(4)->Range(256, 1 << 18)->Complexity();

// LeetCode 72: N = |word1| = |word2|, three letters.
void BM_72_brute(benchmark::State& state) {
  const auto a = letters(state.range(0), 3, 7), b = letters(state.range(0), 3, 8);
  measure(state, [&] { return brute::min_distance(a, b); });
}
void BM_72_dp(benchmark::State& state) {
  const auto a = letters(state.range(0), 3, 7), b = letters(state.range(0), 3, 8);
  measure(state, [&] { return min_distance(a, b); });
}
BENCHMARK(BM_72_brute)->DenseRange(4, 10, 1)->Complexity(delannoy);
BENCHMARK(BM_72_dp)->DenseRange(4, 10, 1)->RangeMultiplier(2)->Range(64, 8192)->Complexity();

// LeetCode 5: every substring checked (O(N^3)) vs the palindrome table (O(N^2)).
void BM_5_brute(benchmark::State& state) {
  const auto s = letters(state.range(0), 2, 9);
  measure(state, [&] { return brute::longest_palindrome(s); });
}
void BM_5_dp(benchmark::State& state) {
  const auto s = letters(state.range(0), 2, 9);
  measure(state, [&] { return longest_palindrome(s); });
}
BENCHMARK(BM_5_brute)->RangeMultiplier(2)->Range(64, 1024)->Complexity(cube);
BENCHMARK(BM_5_dp)->RangeMultiplier(2)->Range(64, 1024)->Complexity();

}  // namespace
}  // namespace book::dynprog
