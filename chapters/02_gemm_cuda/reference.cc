#include "chapters/02_gemm_cuda/reference.h"

#include <cmath>
#include <sstream>

#include "common/check.h"
#include "common/rng.h"

namespace book::gemm_cuda {

float round_to_bf16(float x) { return to_float(to_bf16(x)); }

GemmProblem random_problem(GemmShape s, std::uint64_t seed) {
  check_gemm_args(&s, &s, &s, s);
  GemmProblem p;
  p.shape = s;
  Rng rng(seed);
  p.a.resize(std::size_t(s.m) * s.k);
  p.b.resize(std::size_t(s.k) * s.n);
  fill_uniform(std::span<float>(p.a), rng);
  fill_uniform(std::span<float>(p.b), rng);
  for (float x : p.a) p.a16.push_back(to_bf16(x));
  for (float x : p.b) p.b16.push_back(to_bf16(x));
  return p;
}

Reference reference_gemm(const GemmProblem& p, bool bf16) {
  const GemmShape s = p.shape;
  auto value = [&](const std::vector<float>& full, const std::vector<BFloat16>& half,
                   std::size_t i) -> double { return bf16 ? to_float(half[i]) : full[i]; };
  Reference r;
  r.c.assign(std::size_t(s.m) * s.n, 0.0);
  r.magnitude.assign(std::size_t(s.m) * s.n, 0.0);
  for (int i = 0; i < s.m; ++i)
    for (int k = 0; k < s.k; ++k) {
      const double aik = value(p.a, p.a16, std::size_t(i) * s.k + k);
      for (int j = 0; j < s.n; ++j) {
        const double bkj = value(p.b, p.b16, std::size_t(k) * s.n + j);
        r.c[std::size_t(i) * s.n + j] += aik * bkj;
        r.magnitude[std::size_t(i) * s.n + j] += std::abs(aik * bkj);
      }
    }
  return r;
}

double fp32_dot_bound(int k) {
  const double ku = k * 0x1.0p-24;
  return ku / (1.0 - ku);
}

Comparison compare_gemm(std::span<const float> got, const Reference& ref, GemmShape s,
                        double factor, TileSize tile) {
  BOOK_CHECK(got.size() == ref.c.size(), "compare_gemm: got " << got.size() << " elements, the "
                                                              << "reference has " << ref.c.size());
  Comparison out;
  const double gamma = fp32_dot_bound(s.k);
  std::vector<std::uint8_t> wrong(got.size(), 0);
  for (std::size_t e = 0; e < got.size(); ++e) {
    const double bound = factor * gamma * ref.magnitude[e] + 1e-30;
    const double error = std::abs(double(got[e]) - ref.c[e]);
    if (std::isfinite(got[e]) && error <= bound) continue;
    wrong[e] = 1;
    if (out.bad++ == 0) {
      std::ostringstream message;
      message << "C(" << e / s.n << "," << e % s.n << ") of " << s.m << "x" << s.n << "x" << s.k
              << ": expected " << ref.c[e] << ", got " << got[e] << " (error " << error
              << ", bound " << bound << ")";
      out.first = message.str();
    }
  }
  if (out.bad > 0) out.pattern = describe_errors(wrong, got, s, tile).tags();
  return out;
}

}  // namespace book::gemm_cuda
