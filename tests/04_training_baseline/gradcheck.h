// Test helpers: central finite differences in double precision, and random fills.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "common/rng.h"

namespace book::train::testing {

/// Random values in [lo, hi) from a seeded stream (never zeros, never a constant).
inline std::vector<double> random_vector(std::size_t n, Rng& rng, double lo = -1.0,
                                         double hi = 1.0) {
  std::vector<double> v(n);
  for (auto& x : v) x = rng.uniform(lo, hi);
  return v;
}

/// Converts a double vector to float.
inline std::vector<float> to_float(const std::vector<double>& v) { return {v.begin(), v.end()}; }

/// Central difference (f(x+h) - f(x-h)) / 2h of the scalar `loss` with respect to each element
/// of `x` (perturbed in place and restored). Error O(h²) plus rounding O(ε/h): about 1e-10 at
/// h = 1e-6 in double for the smooth functions tested here.
inline std::vector<double> numeric_gradient(std::vector<double>& x,
                                            const std::function<double()>& loss, double h = 1e-6) {
  std::vector<double> g(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double saved = x[i];
    x[i] = saved + h;
    const double plus = loss();
    x[i] = saved - h;
    const double minus = loss();
    x[i] = saved;
    g[i] = (plus - minus) / (2 * h);
  }
  return g;
}

/// Expects |actual - expected| <= tol · max(1, |expected|) everywhere; reports the first
/// mismatches with their index.
inline void expect_close(const std::string& what, const std::vector<double>& expected,
                         const std::vector<double>& actual, double tol) {
  ASSERT_EQ(expected.size(), actual.size()) << what;
  int reported = 0;
  for (std::size_t i = 0; i < expected.size() && reported < 5; ++i) {
    const double bound = tol * std::max(1.0, std::fabs(expected[i]));
    if (!(std::fabs(actual[i] - expected[i]) <= bound)) {  // also catches NaN
      ADD_FAILURE() << what << "[" << i << "]: expected " << expected[i] << ", got " << actual[i]
                    << " (tolerance " << bound << ")";
      ++reported;
    }
  }
}

/// Σ out[i] · weights[i]: a loss whose gradient with respect to out is `weights` (random, so
/// every output element matters and errors cannot cancel).
inline double weighted_sum(const std::vector<double>& out, const std::vector<double>& weights) {
  double s = 0;
  for (std::size_t i = 0; i < out.size(); ++i) s += out[i] * weights[i];
  return s;
}

}  // namespace book::train::testing
