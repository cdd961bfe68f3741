#include "chapters/13_disaggregation_speculation/roofline.h"

#include <algorithm>

#include "chapters/01_gemm_cpu/peak.h"
#include "chapters/01_gemm_cpu/sgemm.h"
#include "common/buffer.h"
#include "common/check.h"
#include "common/rng.h"
#include "common/timer.h"

namespace book::roofline {

double Ceilings::attainable(double intensity) const {
  return std::min(peak_gflops, bandwidth_gbs * intensity);
}

Ceilings measure_ceilings(int threads) {
  BOOK_CHECK(threads >= 1, "measure_ceilings: threads must be >= 1, got " << threads);
  // The wider of the two FMA peaks: sgemm runs AVX-512 where the CPU has it, and an AVX2 peak
  // would then sit below what sgemm reaches.
  const double peak = std::max(gemm::measure_fp32_peak_gflops(threads),
                               gemm::measure_fp32_peak_gflops_avx512(threads));
  return {peak, gemm::measure_triad_bandwidth_gbs(threads)};
}

double linear_flops(int m, int n, int k) { return 2.0 * m * n * k; }

double linear_bytes(int m, int n, int k) {
  return 4.0 *
         (static_cast<double>(k) * n + static_cast<double>(m) * k + static_cast<double>(m) * n);
}

int ridge_tokens(int n, int k, const Ceilings& ceilings, int max_m) {
  for (int m = 1; m <= max_m; ++m)
    if (linear_flops(m, n, k) / linear_bytes(m, n, k) >= ceilings.ridge()) return m;
  return 0;
}

//! [measure_linear]
std::vector<Point> measure_linear(int n, int k, const std::vector<int>& ms, int repeats,
                                  const Ceilings& ceilings) {
  BOOK_CHECK(n >= 1 && k >= 1, "measure_linear: n and k must be >= 1, got " << n << ", " << k);
  BOOK_CHECK(repeats >= 1, "measure_linear: repeats must be >= 1, got " << repeats);
  const int max_m = ms.empty() ? 1 : *std::max_element(ms.begin(), ms.end());
  BOOK_CHECK(!ms.empty() && *std::min_element(ms.begin(), ms.end()) >= 1,
             "measure_linear: every m must be >= 1");
  Rng rng(13);
  std::vector<float> w(static_cast<std::size_t>(k) * n), x(static_cast<std::size_t>(max_m) * k),
      y(static_cast<std::size_t>(max_m) * n);
  fill_uniform(std::span(w), rng);
  fill_uniform(std::span(x), rng);
  std::vector<Point> points;
  for (const int m : ms) {
    // W (64 MiB at 4096 × 4096) is larger than the last-level cache, so every call streams it
    // from memory again, as every decode step of a real model does.
    const double seconds = median_seconds(
        [&] {
          gemm::sgemm(gemm::Transpose::kNo, gemm::Transpose::kNo, m, n, k, 1.0f, x.data(), k,
                      w.data(), n, 0.0f, y.data(), n);
        },
        repeats);
    Point p;
    p.m = m;
    p.intensity = linear_flops(m, n, k) / linear_bytes(m, n, k);
    p.seconds = seconds;
    p.gflops = linear_flops(m, n, k) / seconds / 1e9;
    p.attainable = ceilings.attainable(p.intensity);
    p.bytes_per_s = linear_bytes(m, n, k) / seconds;
    points.push_back(p);
  }
  return points;
}
//! [measure_linear]

int free_ride_tokens(const std::vector<Point>& points, double slack) {
  BOOK_CHECK(!points.empty(), "free_ride_tokens: no points");
  double fastest = points.front().seconds;
  for (const Point& p : points) fastest = std::min(fastest, p.seconds);
  int best = 0;
  for (const Point& p : points)
    if (p.seconds <= slack * fastest) best = std::max(best, p.m);
  return best;
}

}  // namespace book::roofline
