/// @file
/// BF16 and FP16 stored as 16-bit patterns, converted to and from FP32 exactly as a GPU does
/// (round to nearest, ties to even). Chapters 2, 3 and 4 keep 16-bit data this way on the CPU.
#pragma once

#include <cstdint>

namespace book {

/// FP32 → BF16 bits, round to nearest, ties to even; ±inf stays ±inf, NaN stays a (quiet) NaN.
std::uint16_t float_to_bf16(float value);
/// BF16 bits → FP32 (exact).
float bf16_to_float(std::uint16_t bits);
/// FP32 → FP16 bits, round to nearest, ties to even; overflow (|x| ≥ 65520) gives ±inf, tiny
/// values become FP16 subnormals or ±0, NaN stays a (quiet) NaN.
std::uint16_t float_to_fp16(float value);
/// FP16 bits → FP32 (exact, subnormals included).
float fp16_to_float(std::uint16_t bits);

}  // namespace book
