// The FP8 conversions against an independent reference: the nearest of the format's finite values
// found by scanning all 256 patterns (ties to the even pattern), on random and hand-picked
// inputs; every pattern round-tripped; known values computed by hand from the formats' fields.
#include "common/float8.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "common/dtype.h"
#include "common/rng.h"

namespace book {
namespace {

using Encode = std::uint8_t (*)(float, Saturate);
using Decode = float (*)(std::uint8_t);

struct Format {
  const char* name;
  Encode encode;
  Decode decode;
  std::uint8_t max_finite;  // positive pattern of the largest finite value
  double max;               // its value
  double next_after_max;    // the value the next pattern would have, were it finite
  std::uint8_t overflow;    // what kNo gives past the max: NaN (E4M3) or inf (E5M2)
};

const Format kE4M3{"e4m3", float_to_fp8_e4m3, fp8_e4m3_to_float, 0x7e, 448, 480, 0x7f};
const Format kE5M2{"e5m2", float_to_fp8_e5m2, fp8_e5m2_to_float, 0x7b, 57344, 65536, 0x7c};

// The reference rounding: scan the positive finite patterns for the nearest (they are monotone),
// ties to the even pattern; past the max, by the midpoint to the value the next pattern would
// have, saturate or overflow.
std::uint8_t reference(const Format& f, float x, Saturate saturate) {
  const double v = std::fabs(static_cast<double>(x));
  const std::uint8_t sign = std::signbit(x) ? 0x80 : 0;
  int best = 0;
  for (int p = 0; p <= f.max_finite; ++p)
    if (f.decode(static_cast<std::uint8_t>(p)) <= v) best = p;
  const double below = f.decode(static_cast<std::uint8_t>(best));
  const double above =
      best == f.max_finite ? f.next_after_max : f.decode(static_cast<std::uint8_t>(best + 1));
  int pick = best;
  if (v - below > above - v || (v - below == above - v && (best & 1))) pick = best + 1;
  if (pick > f.max_finite) pick = saturate == Saturate::kYes ? f.max_finite : f.overflow;
  return static_cast<std::uint8_t>(pick | sign);
}

class Fp8 : public ::testing::TestWithParam<const Format*> {};

TEST_P(Fp8, EveryPatternRoundTrips) {
  const Format& f = *GetParam();
  int nans = 0;
  for (int p = 0; p < 256; ++p) {
    const auto bits = static_cast<std::uint8_t>(p);
    const float x = f.decode(bits);
    if (std::isnan(x)) {
      ++nans;
      EXPECT_TRUE(std::isnan(f.decode(f.encode(x, Saturate::kNo)))) << p;
      continue;
    }
    EXPECT_EQ(f.encode(x, Saturate::kNo), bits) << f.name << " pattern " << p << " = " << x;
    if (std::isfinite(x)) {
      EXPECT_EQ(f.encode(x, Saturate::kYes), bits) << p;
    }
  }
  EXPECT_EQ(nans, f.overflow == 0x7f ? 2 : 6);  // E4M3: S.1111.111; E5M2: S.11111.{01,10,11}
}

TEST_P(Fp8, MatchesTheNearestValueOnRandomInputs) {
  const Format& f = *GetParam();
  Rng rng(14);
  for (int i = 0; i < 20000; ++i) {
    // Magnitudes log-uniform across the whole range, subnormals and overflow included.
    const double e = rng.uniform(-20.0, 17.0);
    const float x = static_cast<float>((rng.uniform(0.0, 1.0) < 0.5 ? -1 : 1) * std::exp2(e));
    for (Saturate s : {Saturate::kYes, Saturate::kNo})
      ASSERT_EQ(f.encode(x, s), reference(f, x, s)) << f.name << " x = " << x;
  }
}

TEST_P(Fp8, MidpointsTieToEven) {
  const Format& f = *GetParam();
  for (int p = 0; p < f.max_finite; ++p) {  // every gap, subnormal ones included
    const double lo = f.decode(static_cast<std::uint8_t>(p));
    const double hi = f.decode(static_cast<std::uint8_t>(p + 1));
    const auto mid = static_cast<float>((lo + hi) / 2);  // exact: one more bit than the format
    const int even = (p & 1) ? p + 1 : p;
    EXPECT_EQ(f.encode(mid, Saturate::kNo), even) << f.name << " between " << lo << " and " << hi;
    EXPECT_EQ(f.encode(-mid, Saturate::kNo), even | 0x80) << -mid;
    EXPECT_EQ(f.encode(std::nextafter(mid, 0.0f), Saturate::kNo), p);
    EXPECT_EQ(f.encode(std::nextafter(mid, 1e30f), Saturate::kNo), p + 1);
  }
}

TEST_P(Fp8, SaturationAndOverflow) {
  const Format& f = *GetParam();
  const auto max = static_cast<float>(f.max);
  const auto mid = static_cast<float>((f.max + f.next_after_max) / 2);
  const float inf = std::numeric_limits<float>::infinity();
  // Up to the midpoint past the max, a value still rounds to the max (ties go to the max in E4M3,
  // whose max pattern 0x7e is even; to the overflow in E5M2, whose 0x7b is odd).
  EXPECT_EQ(f.encode(std::nextafter(mid, 0.0f), Saturate::kNo), f.max_finite);
  EXPECT_EQ(f.encode(mid, Saturate::kNo), f.max_finite == 0x7e ? f.max_finite : f.overflow);
  for (float big : {std::nextafter(mid, inf), 2 * max, 1e30f, inf}) {
    EXPECT_EQ(f.encode(big, Saturate::kYes), f.max_finite) << big;
    EXPECT_EQ(f.encode(-big, Saturate::kYes), f.max_finite | 0x80) << -big;
    EXPECT_EQ(f.encode(big, Saturate::kNo), f.overflow) << big;
    EXPECT_EQ(f.encode(-big, Saturate::kNo), f.overflow | 0x80) << -big;
  }
  EXPECT_EQ(f.decode(f.max_finite), max);
}

TEST_P(Fp8, NanStaysNan) {
  const Format& f = *GetParam();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (Saturate s : {Saturate::kYes, Saturate::kNo}) {
    EXPECT_TRUE(std::isnan(f.decode(f.encode(nan, s))));
    EXPECT_TRUE(std::isnan(f.decode(f.encode(-nan, s))));
  }
}

TEST_P(Fp8, ZeroSignAndUnderflow) {
  const Format& f = *GetParam();
  EXPECT_EQ(f.encode(0.0f, Saturate::kNo), 0x00);
  EXPECT_EQ(f.encode(-0.0f, Saturate::kNo), 0x80);
  const double min_sub = f.decode(0x01);
  EXPECT_EQ(f.encode(static_cast<float>(min_sub / 2), Saturate::kNo), 0x00);  // tie to even: 0
  EXPECT_EQ(f.encode(std::nextafter(static_cast<float>(min_sub / 2), 1.0f), Saturate::kNo), 0x01);
  EXPECT_EQ(f.encode(1e-30f, Saturate::kNo), 0x00);
  EXPECT_EQ(f.encode(std::numeric_limits<float>::denorm_min(), Saturate::kNo), 0x00);
}

INSTANTIATE_TEST_SUITE_P(Formats, Fp8, ::testing::Values(&kE4M3, &kE5M2),
                         [](const auto& info) { return std::string(info.param->name); });

// Known values from the formats' definitions, written out by hand (not computed by the code
// under test): max = 1.75 · 2^(emax), min normal = 2^(1 − bias), min subnormal = 2^(1 − bias − m).
TEST(Fp8Known, E4M3) {
  EXPECT_EQ(fp8_e4m3_to_float(0x7e), 448.0f);
  EXPECT_EQ(fp8_e4m3_to_float(0x08), 0.015625f);     // 2^-6, smallest normal
  EXPECT_EQ(fp8_e4m3_to_float(0x01), 0.001953125f);  // 2^-9, smallest subnormal
  EXPECT_EQ(fp8_e4m3_to_float(0x07), 0.013671875f);  // 7 · 2^-9, largest subnormal
  EXPECT_EQ(fp8_e4m3_to_float(0x38), 1.0f);          // exponent field 7 = bias
  EXPECT_EQ(fp8_e4m3_to_float(0xb8), -1.0f);
  EXPECT_EQ(fp8_e4m3_to_float(0x77), 240.0f);  // 1.875 · 2^7
  EXPECT_EQ(fp8_e4m3_to_float(0x78), 256.0f);  // exponent field 15 still holds finite values
  EXPECT_TRUE(std::isnan(fp8_e4m3_to_float(0x7f)));
  EXPECT_TRUE(std::isnan(fp8_e4m3_to_float(0xff)));
  EXPECT_EQ(float_to_fp8_e4m3(448.0f, Saturate::kNo), 0x7e);
  EXPECT_EQ(float_to_fp8_e4m3(0.001953125f, Saturate::kNo), 0x01);
  EXPECT_EQ(float_to_fp8_e4m3(1.0625f, Saturate::kNo), 0x38);  // tie between 1 and 1.125: even
  EXPECT_EQ(float_to_fp8_e4m3(1.1875f, Saturate::kNo), 0x3a);  // tie 1.125 | 1.25: 1.25 (even)
  EXPECT_EQ(float_to_fp8_e4m3(0.3f, Saturate::kNo), 0x2a);  // 0.3 ≈ 1.2 · 2^-2 → 1.25 · 2^-2
}

TEST(Fp8Known, E5M2) {
  EXPECT_EQ(fp8_e5m2_to_float(0x7b), 57344.0f);
  EXPECT_EQ(fp8_e5m2_to_float(0x04), 6.103515625e-05f);    // 2^-14, smallest normal
  EXPECT_EQ(fp8_e5m2_to_float(0x01), 1.52587890625e-05f);  // 2^-16, smallest subnormal
  EXPECT_EQ(fp8_e5m2_to_float(0x3c), 1.0f);
  EXPECT_EQ(fp8_e5m2_to_float(0x7c), std::numeric_limits<float>::infinity());
  EXPECT_EQ(fp8_e5m2_to_float(0xfc), -std::numeric_limits<float>::infinity());
  for (int p : {0x7d, 0x7e, 0x7f, 0xfd, 0xfe, 0xff})
    EXPECT_TRUE(std::isnan(fp8_e5m2_to_float(static_cast<std::uint8_t>(p)))) << p;
  EXPECT_EQ(float_to_fp8_e5m2(57344.0f, Saturate::kNo), 0x7b);
  EXPECT_EQ(float_to_fp8_e5m2(1.52587890625e-05f, Saturate::kNo), 0x01);
  EXPECT_EQ(float_to_fp8_e5m2(1.125f, Saturate::kNo), 0x3c);  // tie 1 | 1.25: 1 (even)
  EXPECT_EQ(float_to_fp8_e5m2(1.375f, Saturate::kNo), 0x3e);  // tie 1.25 | 1.5: 1.5 (even)
}

// The typed layer in common/dtype.h is the bit-level one.
TEST(Fp8Known, TypedConversions) {
  EXPECT_EQ(sizeof(Fp8E4M3), 1u);
  EXPECT_EQ(sizeof(Fp8E5M2), 1u);
  EXPECT_EQ(to_fp8_e4m3(500.0f, Saturate::kYes).bits, 0x7e);
  EXPECT_TRUE(std::isnan(to_float(to_fp8_e4m3(500.0f, Saturate::kNo))));
  EXPECT_EQ(to_float(to_fp8_e5m2(1e6f, Saturate::kNo)), std::numeric_limits<float>::infinity());
  EXPECT_EQ(to_float(to_fp8_e5m2(-1e6f, Saturate::kYes)), -57344.0f);
  EXPECT_EQ(to_float(to_fp8_e4m3(-0.001953125f, Saturate::kNo)), -0.001953125f);
}

}  // namespace
}  // namespace book
