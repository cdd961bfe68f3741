#include "common/float16.h"

#include <bit>
#include <cmath>

namespace book {

//! [bf16_rounding]
std::uint16_t float_to_bf16(float value) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
  // NaN first: rounding could carry a NaN's low payload bits into an infinity's pattern.
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((bits >> 16) | 0x0040u);
  // Round to nearest even on the 16 dropped bits: add 0x7fff plus the lowest kept bit. A carry
  // into the exponent is right (it rounds up to the next binade, or to inf past the max).
  const std::uint32_t lsb = (bits >> 16) & 1u;
  return static_cast<std::uint16_t>((bits + 0x7fffu + lsb) >> 16);
}
//! [bf16_rounding]

float bf16_to_float(std::uint16_t bits) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
}

std::uint16_t float_to_fp16(float value) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
  const std::uint16_t sign = static_cast<std::uint16_t>((bits >> 16) & 0x8000u);
  const std::uint32_t abs = bits & 0x7fffffffu;
  if (abs > 0x7f800000u) return sign | 0x7e00u;   // NaN → quiet NaN
  if (abs >= 0x477ff000u) return sign | 0x7c00u;  // ≥ 65520 (65504 + half an ulp): rounds to inf
  const int exponent = static_cast<int>(abs >> 23) - 127;
  if (exponent >= -14) {
    // Normal FP16: rebias the exponent (127 → 15) and round the mantissa from 23 to 10 bits.
    // The addition may carry into the exponent, which is the correct rounding up.
    const std::uint32_t rebased = abs - ((127u - 15u) << 23);
    const std::uint32_t lsb = (rebased >> 13) & 1u;
    return sign | static_cast<std::uint16_t>((rebased + 0xfffu + lsb) >> 13);
  }
  if (exponent < -25) return sign;  // below half the smallest subnormal (2^-25): ±0
  // Subnormal FP16: value = m · 2^-24 with the implicit 1 made explicit, then shifted right.
  const std::uint32_t mantissa = (abs & 0x7fffffu) | 0x800000u;
  const int shift = -exponent - 14 + 13;  // between 14 and 24
  const std::uint32_t kept = mantissa >> shift;
  const std::uint32_t rest = mantissa & ((1u << shift) - 1u), half = 1u << (shift - 1);
  const bool round_up = rest > half || (rest == half && (kept & 1u));
  return sign | static_cast<std::uint16_t>(kept + round_up);  // a carry gives the smallest normal
}

float fp16_to_float(std::uint16_t bits) {
  const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000u) << 16;
  const std::uint32_t exponent = (bits >> 10) & 0x1fu, mantissa = bits & 0x3ffu;
  if (exponent == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  if (exponent == 0) {  // zero or subnormal: m · 2^-24, exact in float
    const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  return std::bit_cast<float>(sign | ((exponent + 127u - 15u) << 23) | (mantissa << 13));
}

}  // namespace book
