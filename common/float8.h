/// @file
/// The two 8-bit floating-point formats of FP8 training and inference (the OCP "OFP8" formats
/// that NVIDIA Hopper, AMD MI300 and Intel Gaudi implement), stored as 8-bit patterns and
/// converted to and from FP32 the way the hardware does: round to nearest, ties to even.
///
/// - **E4M3** ("E4M3FN"): 4 exponent bits (bias 7), 3 mantissa bits, **no infinities**; the one
///   NaN pattern is S.1111.111, so the top binade keeps seven finite values and the largest is
///   1.75 · 2^8 = 448. The smallest subnormal is 2^-9 = 0.001953125. Weights and activations.
/// - **E5M2**: 5 exponent bits (bias 15), 2 mantissa bits, IEEE-like (±inf = S.11111.00, NaN =
///   S.11111.xx with xx ≠ 0); the largest finite is 1.75 · 2^15 = 57344, the smallest subnormal
///   2^-16 = 1.52587890625e-05. Gradients, whose range matters more than their precision.
///
/// A value too large for the format is the caller's choice (Saturate): clamp it to ±max (what
/// FP8 training recipes use, CUDA's __NV_SATFINITE and PTX's cvt .satfinite), or let it become
/// what IEEE rounding gives: NaN for E4M3, which has no infinity, and ±inf for E5M2.
#pragma once

#include <cstdint>

namespace book {

/// What an FP32 → FP8 conversion does with a value beyond the format's largest finite value
/// (after rounding: 464 still rounds to 448 in E4M3, 61440 to 57344 in E5M2 only if saturating).
enum class Saturate {
  kYes,  ///< ±inf and finite values past the max become ±max (NaN stays NaN).
  kNo,   ///< they become NaN (E4M3, no infinity) or ±inf (E5M2), as IEEE rounding would.
};

/// The largest finite E4M3 value, 448 (pattern 0x7e).
inline constexpr float kFp8E4M3Max = 448.0f;
/// The largest finite E5M2 value, 57344 (pattern 0x7b).
inline constexpr float kFp8E5M2Max = 57344.0f;

/// FP32 → E4M3 bits, round to nearest, ties to even; subnormals kept, NaN → 0x7f (sign kept).
std::uint8_t float_to_fp8_e4m3(float value, Saturate saturate);
/// E4M3 bits → FP32 (exact: every E4M3 value is an FP32 value).
float fp8_e4m3_to_float(std::uint8_t bits);
/// FP32 → E5M2 bits, round to nearest, ties to even; subnormals kept, NaN → 0x7e (a quiet NaN,
/// sign kept).
std::uint8_t float_to_fp8_e5m2(float value, Saturate saturate);
/// E5M2 bits → FP32 (exact).
float fp8_e5m2_to_float(std::uint8_t bits);

}  // namespace book
