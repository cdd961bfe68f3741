// The 16-bit conversions against an independent reference: a binary search for the nearest
// representable value (ties to the even pattern), on random and hand-picked inputs, plus every one
// of the 65,536 patterns round-tripped.
#include "common/float16.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <vector>

#include "common/rng.h"

namespace book {
namespace {

// The reference for 16-bit rounding: among all finite values of the format (plus the first
// value past the largest, standing for infinity), the nearest to x, ties to the even pattern.
template <typename Decode>
std::uint16_t nearest_pattern(float x, Decode decode, std::uint16_t max_finite,
                              double overflow_value) {
  const double v = std::fabs(static_cast<double>(x));
  std::uint16_t lo = 0, hi = max_finite;  // binary search over the monotone positive patterns
  while (lo < hi) {
    const std::uint16_t mid = static_cast<std::uint16_t>((lo + hi + 1) / 2);
    if (decode(mid) <= v)
      lo = mid;
    else
      hi = static_cast<std::uint16_t>(mid - 1);
  }
  const double below = decode(lo);
  const double above =
      lo == max_finite ? overflow_value : decode(static_cast<std::uint16_t>(lo + 1));
  std::uint16_t pick = lo;
  if (v - below > above - v || (v - below == above - v && (lo & 1)))
    pick = static_cast<std::uint16_t>(lo + 1);
  return static_cast<std::uint16_t>(pick | (std::signbit(x) ? 0x8000 : 0));
}

TEST(Float16, Fp16RoundsToNearestEven) {
  Rng rng(6);
  auto decode = [](std::uint16_t b) { return static_cast<double>(fp16_to_float(b)); };
  std::vector<float> values = {65504.0f,
                               65519.99f,
                               65520.0f,
                               1e-8f,
                               2.98023224e-8f /* 2^-25: tie to 0 */,
                               2.98023259e-8f,
                               6.1035156e-5f,
                               6.09e-5f,
                               1.0f + 1.0f / 2048,
                               1.0f + 3.0f / 2048};
  for (int i = 0; i < 20000; ++i) {
    const float magnitude = static_cast<float>(
        std::ldexp(rng.uniform(1.0, 2.0), static_cast<int>(rng.uniform_int(-27, 16))));
    values.push_back(rng.uniform() < 0.5 ? -magnitude : magnitude);
  }
  for (float x : values) {
    const std::uint16_t expected = nearest_pattern(x, decode, 0x7bff, 65536.0);
    ASSERT_EQ(float_to_fp16(x), expected)
        << "x = " << x << " (bits " << std::hex << std::bit_cast<std::uint32_t>(x) << ")";
  }
  EXPECT_EQ(float_to_fp16(1.0f + 1.0f / 2048), 0x3c00)
      << "1 + half an ulp is a tie: rounds to the even 1.0";
  EXPECT_EQ(float_to_fp16(1.0f + 3.0f / 2048), 0x3c02)
      << "1 + 1.5 ulp is a tie: rounds to the even 1 + 2 ulp";
}

TEST(Float16, Bf16RoundsToNearestEven) {
  Rng rng(7);
  auto decode = [](std::uint16_t b) { return static_cast<double>(bf16_to_float(b)); };
  for (int i = 0; i < 20000; ++i) {
    const float x =
        std::bit_cast<float>(static_cast<std::uint32_t>(rng.next_u64()) & 0x7f7fffffu);  // finite
    const std::uint16_t expected = nearest_pattern(x, decode, 0x7f7f, std::ldexp(1.0, 128));
    ASSERT_EQ(float_to_bf16(x), expected) << "x = " << x;
  }
  EXPECT_EQ(float_to_bf16(std::numeric_limits<float>::max()), 0x7f80)
      << "FLT_MAX rounds up to +inf in BF16";
}

TEST(Float16, RoundTripsAndSpecialValues) {
  for (std::uint32_t b = 0; b < 65536; ++b) {  // every 16-bit pattern converts to float and back
    const auto bits = static_cast<std::uint16_t>(b);
    const float h = fp16_to_float(bits), bf = bf16_to_float(bits);
    if (std::isnan(h))
      EXPECT_TRUE(std::isnan(fp16_to_float(float_to_fp16(h))));
    else
      ASSERT_EQ(float_to_fp16(h), bits) << "fp16 pattern " << std::hex << b;
    if (std::isnan(bf))
      EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(bf))));
    else
      ASSERT_EQ(float_to_bf16(bf), bits) << "bf16 pattern " << std::hex << b;
  }
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(float_to_fp16(inf), 0x7c00);
  EXPECT_EQ(float_to_fp16(-inf), 0xfc00);
  EXPECT_EQ(float_to_bf16(-inf), 0xff80);
  // A NaN whose payload sits only in the low bits must stay NaN, not round to infinity.
  const float low_nan = std::bit_cast<float>(0x7f800001u);
  EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(low_nan))));
  EXPECT_TRUE(std::isnan(fp16_to_float(float_to_fp16(low_nan))));
  EXPECT_EQ(fp16_to_float(0x0001), std::ldexp(1.0f, -24)) << "smallest FP16 subnormal";
}

}  // namespace
}  // namespace book
