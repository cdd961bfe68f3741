/// @file
/// The book's one vocabulary for number formats: `book::DType` (f32, f64, bf16, f16), the 16-bit
/// storage types `book::BFloat16` and `book::Half`, the 8-bit float storage types
/// `book::Fp8E4M3` and `book::Fp8E5M2`, and their conversions.
///
/// The FP8 types are storage formats (chapter 14), not DType entries: no buffer, tensor or
/// collective in the book is typed by them, and a DType entry would promise every switch on DType
/// (chapter 3's collectives among them) an FP8 path that nothing needs.
///
/// The bit-level rounding lives in common/float16.h and common/float8.h; this header gives it
/// types, so a BF16 value cannot be mistaken for an FP16 one or for a plain `uint16_t`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>

#include "common/float16.h"
#include "common/float8.h"

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

/// OCP FP8 E4M3 ("E4M3FN": bias 7, no infinities, max 448, NaN = S.1111.111). Storage only.
struct Fp8E4M3 {
  std::uint8_t bits = 0;  ///< The raw bits.
};

/// OCP FP8 E5M2 (bias 15, IEEE-like: ±inf and NaNs, max 57344). Storage only.
struct Fp8E5M2 {
  std::uint8_t bits = 0;  ///< The raw bits.
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

/// FP32 → E4M3, round to nearest, ties to even; past ±448 (after rounding) and ±inf give ±448
/// with Saturate::kYes and NaN with Saturate::kNo; NaN stays NaN.
inline Fp8E4M3 to_fp8_e4m3(float value, Saturate saturate) {
  return {float_to_fp8_e4m3(value, saturate)};
}
/// FP32 → E5M2, round to nearest, ties to even; past ±57344 (after rounding) and ±inf give
/// ±57344 with Saturate::kYes and ±inf with Saturate::kNo; NaN stays NaN.
inline Fp8E5M2 to_fp8_e5m2(float value, Saturate saturate) {
  return {float_to_fp8_e5m2(value, saturate)};
}
/// E4M3 → FP32 (exact, subnormals included).
inline float to_float(Fp8E4M3 value) { return fp8_e4m3_to_float(value.bits); }
/// E5M2 → FP32 (exact, subnormals and infinities included).
inline float to_float(Fp8E5M2 value) { return fp8_e5m2_to_float(value.bits); }

}  // namespace book
