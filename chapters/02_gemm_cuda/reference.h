/// @file
/// The CPU side of checking a GEMM: seeded random problems, BF16 rounding, a double-precision
/// reference, and an element-by-element comparison with a stated error bound. Plain C++.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "chapters/02_gemm_cuda/error_pattern.h"
#include "chapters/02_gemm_cuda/schedule.h"
#include "common/dtype.h"

namespace book::gemm_cuda {

/// The float whose value is the BF16 value nearest to `x` (book::to_bf16, common/dtype.h).
float round_to_bf16(float x);

/// A random problem: inputs uniform in [-1, 1) from book::Rng(seed), in FP32 and as BF16.
struct GemmProblem {
  GemmShape shape;            ///< Its size.
  std::vector<float> a;       ///< A, m × k, row-major, FP32.
  std::vector<float> b;       ///< B, k × n, row-major, FP32.
  std::vector<BFloat16> a16;  ///< A rounded to BF16 (what a BF16 rung reads).
  std::vector<BFloat16> b16;  ///< B rounded to BF16.
};

/// Draws a problem of `shape` from seed `seed`; throws book::Error for a non-positive shape.
GemmProblem random_problem(GemmShape shape, std::uint64_t seed);

/// The reference for a problem in double: C = A·B (FP32 inputs, or their BF16 roundings when
/// `bf16` is true), and the magnitudes |A|·|B| that bound the rounding error of each element.
struct Reference {
  std::vector<double> c;          ///< A·B in double.
  std::vector<double> magnitude;  ///< |A|·|B| in double.
};

/// Computes the reference (O(m·n·k) on the CPU: keep shapes modest).
Reference reference_gemm(const GemmProblem& problem, bool bf16);

/// The bound γ_k = k·u / (1 − k·u), u = 2⁻²⁴: any FP32 summation order of k products (exact or
/// rounded once, FMA or not) is within γ_k·Σ|a·b| of the exact sum (Higham, Accuracy and
/// Stability of Numerical Algorithms, 2nd ed., §3.1).
double fp32_dot_bound(int k);

/// The verdict of compare_gemm().
struct Comparison {
  std::int64_t bad = 0;  ///< Elements outside the bound, NaN or infinite.
  std::string first;     ///< The first bad element: index, expected, got, bound; empty if none.
  /// Where the bad elements are (describe_errors() against the rung's tile), e.g.
  /// "[unwritten] [edge tiles only]"; empty if none is bad or no tag holds.
  std::string pattern;
};

/// Checks every element: |got − ref| ≤ factor · γ_k · |A|·|B| + 1e-30; NaN (the poison) and
/// infinities never pass. `tile` is the rung's block tile, for the pattern's tile-relative tags.
Comparison compare_gemm(std::span<const float> got, const Reference& ref, GemmShape shape,
                        double factor, TileSize tile = {});

}  // namespace book::gemm_cuda
