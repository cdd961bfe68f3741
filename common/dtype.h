/// @file
/// The book's one vocabulary for number formats: `book::DType` (f32, f64, bf16, f16), the 16-bit
/// storage types `book::BFloat16` and `book::Half`, and their conversions.
///
/// The bit-level rounding lives in common/float16.h; this header gives it types, so a BF16 value
/// cannot be mistaken for an FP16 one or for a plain `uint16_t`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>

#include "common/float16.h"

namespace book {

/// bfloat16: the top 16 bits of an FP32 (8 exponent bits, 7 mantissa bits). Storage only: compute
/// converts to FP32 with to_float(), works, and rounds back with to_bf16().
struct BFloat16 {
  std::uint16_t bits = 0;  ///< The raw bits.
};

/// IEEE 754 half precision, FP16 (5 exponent bits, 10 mantissa bits). Storage only, like BFloat16.
struct Half {
  std::uint16_t bits = 0;  ///< The raw bits.
};

/// The element type of a buffer, a tensor, or a training run's precision.
enum class DType {
  kF32,   ///< IEEE 754 single precision (float).
  kF64,   ///< IEEE 754 double precision (double).
  kBF16,  ///< bfloat16 (book::BFloat16).
  kF16,   ///< IEEE 754 half precision (book::Half).
};

/// Bytes per element of `dtype`: 4, 8, 2 or 2.
std::size_t dtype_size(DType dtype);

/// The canonical name: "f32", "f64", "bf16" or "f16".
const char* dtype_name(DType dtype);

/// The DType named `name`: a canonical name or a common spelling ("fp32", "float32", "float",
/// "fp64", "float64", "double", "bfloat16", "fp16", "float16", "half"), in any letter case.
/// @throws book::Error naming the bad value and listing the valid names.
DType parse_dtype(std::string_view name);

/// The DType of the C++ type `T`: float, double, BFloat16 or Half (any other type does not
/// compile).
template <typename T>
constexpr DType dtype_of() {
  if constexpr (std::is_same_v<T, float>) {
    return DType::kF32;
  } else if constexpr (std::is_same_v<T, double>) {
    return DType::kF64;
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    return DType::kBF16;
  } else {
    static_assert(std::is_same_v<T, Half>, "dtype_of<T>: T is not float, double, BFloat16 or Half");
    return DType::kF16;
  }
}

/// FP32 → BF16, round to nearest, ties to even; ±inf stays ±inf, NaN stays a (quiet) NaN.
inline BFloat16 to_bf16(float value) { return {float_to_bf16(value)}; }
/// FP32 → FP16, round to nearest, ties to even; |x| ≥ 65520 gives ±inf, tiny values become
/// subnormals or ±0, NaN stays a (quiet) NaN.
inline Half to_half(float value) { return {float_to_fp16(value)}; }
/// BF16 → FP32 (exact).
inline float to_float(BFloat16 value) { return bf16_to_float(value.bits); }
/// FP16 → FP32 (exact, subnormals included).
inline float to_float(Half value) { return fp16_to_float(value.bits); }

}  // namespace book
