#include "common/float8.h"

#include <bit>
#include <cmath>

namespace book {
namespace {

// What one FP8 format needs to be encoded: its field widths and bias, its largest finite pattern
// (sign cleared), and what overflow and NaN become without saturation.
struct Fp8Format {
  int mantissa_bits;
  int bias;
  std::uint32_t max_finite;  // 0x7e for E4M3, 0x7b for E5M2
  std::uint32_t overflow;    // 0x7f (NaN) for E4M3, 0x7c (inf) for E5M2
  std::uint32_t nan;         // 0x7f for E4M3, 0x7e for E5M2
};

constexpr Fp8Format kE4M3{3, 7, 0x7e, 0x7f, 0x7f};
constexpr Fp8Format kE5M2{2, 15, 0x7b, 0x7c, 0x7e};

// Shifts `m` right by `shift` (1..31), rounding to nearest with ties to even.
std::uint32_t shift_round_even(std::uint32_t m, int shift) {
  const std::uint32_t kept = m >> shift;
  const std::uint32_t rest = m & ((1u << shift) - 1u), half = 1u << (shift - 1);
  return kept + (rest > half || (rest == half && (kept & 1u)));
}

std::uint8_t encode(float value, const Fp8Format& f, Saturate saturate) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
  const std::uint32_t sign = (bits >> 24) & 0x80u;
  const std::uint32_t abs = bits & 0x7fffffffu;
  if (abs > 0x7f800000u) return static_cast<std::uint8_t>(sign | f.nan);
  const std::uint32_t beyond = saturate == Saturate::kYes ? f.max_finite : f.overflow;
  if (abs == 0x7f800000u) return static_cast<std::uint8_t>(sign | beyond);
  const int exponent = static_cast<int>(abs >> 23) - 127;  // FP32 subnormals read as -127
  const int min_normal = 1 - f.bias;
  std::uint32_t code;
  if (exponent >= min_normal) {
    // Normal in FP8: rebias (127 → bias) and round the 23-bit mantissa to mantissa_bits. A carry
    // into the exponent is the right rounding up (to the next binade, or past the max).
    const std::uint32_t rebased = abs - (static_cast<std::uint32_t>(127 - f.bias) << 23);
    code = shift_round_even(rebased, 23 - f.mantissa_bits);
  } else if (exponent < min_normal - f.mantissa_bits - 1) {
    code = 0;  // below half the smallest subnormal: ±0
  } else {
    // Subnormal in FP8: value = m · 2^(min_normal − mantissa_bits), the implicit 1 made explicit
    // and shifted right; a carry out gives the smallest normal, which is right.
    const std::uint32_t mantissa = (abs & 0x7fffffu) | 0x800000u;
    code = shift_round_even(mantissa, (min_normal - exponent) + (23 - f.mantissa_bits));
  }
  if (code > f.max_finite) code = beyond;
  return static_cast<std::uint8_t>(sign | code);
}

float decode(std::uint8_t bits, int exponent_bits, int mantissa_bits, int bias) {
  const int field = (bits >> mantissa_bits) & ((1 << exponent_bits) - 1);
  const int mantissa = bits & ((1 << mantissa_bits) - 1);
  float magnitude;
  if (field == 0) {
    magnitude = std::ldexp(static_cast<float>(mantissa), 1 - bias - mantissa_bits);
  } else {
    magnitude = std::ldexp(static_cast<float>((1 << mantissa_bits) | mantissa),
                           field - bias - mantissa_bits);
  }
  return (bits & 0x80u) ? -magnitude : magnitude;
}

}  // namespace

std::uint8_t float_to_fp8_e4m3(float value, Saturate saturate) {
  return encode(value, kE4M3, saturate);
}

float fp8_e4m3_to_float(std::uint8_t bits) {
  if ((bits & 0x7fu) == 0x7fu) {  // S.1111.111, the only NaN; there is no infinity
    return std::copysign(std::nanf(""), (bits & 0x80u) ? -1.0f : 1.0f);
  }
  return decode(bits, 4, 3, 7);
}

std::uint8_t float_to_fp8_e5m2(float value, Saturate saturate) {
  return encode(value, kE5M2, saturate);
}

float fp8_e5m2_to_float(std::uint8_t bits) {
  if ((bits & 0x7cu) == 0x7cu) {  // exponent field all ones: ±inf or NaN, as in IEEE
    if (bits & 0x03u) return std::copysign(std::nanf(""), (bits & 0x80u) ? -1.0f : 1.0f);
    return (bits & 0x80u) ? -INFINITY : INFINITY;
  }
  return decode(bits, 5, 2, 15);
}

}  // namespace book
