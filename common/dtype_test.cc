// The typed layer over common/float16.h: sizes, names, spellings, dtype_of, and that the typed
// conversions are the bit-level ones (float16_test checks the rounding itself).
#include "common/dtype.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "common/rng.h"
#include "common/testing/expect_error.h"

namespace book {
namespace {

constexpr DType kAll[] = {DType::kF32, DType::kF64, DType::kBF16, DType::kF16};

TEST(DType, SizesMatchTheStorageTypes) {
  EXPECT_EQ(dtype_size(DType::kF32), sizeof(float));
  EXPECT_EQ(dtype_size(DType::kF64), sizeof(double));
  EXPECT_EQ(dtype_size(DType::kBF16), sizeof(BFloat16));
  EXPECT_EQ(dtype_size(DType::kF16), sizeof(Half));
  EXPECT_EQ(sizeof(BFloat16), 2u);
  EXPECT_EQ(sizeof(Half), 2u);
}

TEST(DType, NamesAreCanonicalAndParseBack) {
  EXPECT_STREQ(dtype_name(DType::kF32), "f32");
  EXPECT_STREQ(dtype_name(DType::kF64), "f64");
  EXPECT_STREQ(dtype_name(DType::kBF16), "bf16");
  EXPECT_STREQ(dtype_name(DType::kF16), "f16");
  for (DType dtype : kAll) EXPECT_EQ(parse_dtype(dtype_name(dtype)), dtype) << dtype_name(dtype);
}

TEST(DType, ParseAcceptsEverySpellingInAnyCase) {
  const std::vector<std::pair<std::string, DType>> spellings = {
      {"f32", DType::kF32},   {"fp32", DType::kF32},      {"float32", DType::kF32},
      {"float", DType::kF32}, {"FP32", DType::kF32},      {"f64", DType::kF64},
      {"fp64", DType::kF64},  {"float64", DType::kF64},   {"double", DType::kF64},
      {"bf16", DType::kBF16}, {"bfloat16", DType::kBF16}, {"BF16", DType::kBF16},
      {"f16", DType::kF16},   {"fp16", DType::kF16},      {"float16", DType::kF16},
      {"half", DType::kF16},  {"Half", DType::kF16},
  };
  for (const auto& [text, dtype] : spellings)
    EXPECT_EQ(parse_dtype(text), dtype) << "'" << text << "' should read as " << dtype_name(dtype);
}

TEST(DType, ParseRefusesABadNameAndListsTheValidOnes) {
  for (const char* bad : {"fp8", "", "f 32", "bf16 ", "int8"})
    testing::expect_error([&] { parse_dtype(bad); },
                          {"'" + std::string(bad) + "'", "f32", "f64", "bf16", "f16"});
}

TEST(DType, OutOfRangeEnumValuesAreRefused) {
  const auto bogus = static_cast<DType>(17);
  testing::expect_error([&] { dtype_size(bogus); }, "17");
  testing::expect_error([&] { dtype_name(bogus); }, "17");
}

TEST(DType, DtypeOfNamesEachStorageType) {
  static_assert(dtype_of<float>() == DType::kF32);
  static_assert(dtype_of<double>() == DType::kF64);
  static_assert(dtype_of<BFloat16>() == DType::kBF16);
  static_assert(dtype_of<Half>() == DType::kF16);
  EXPECT_EQ(dtype_size(dtype_of<BFloat16>()), sizeof(BFloat16));
  EXPECT_EQ(dtype_size(dtype_of<double>()), sizeof(double));
}

// The typed functions must be exactly the bit-level ones, on random finite values and on the
// special ones (±0, ±inf, NaN, FP16 subnormals, overflow).
TEST(DType, TypedConversionsAreTheBitLevelOnes) {
  Rng rng(11);
  std::vector<float> values = {0.0f,
                               -0.0f,
                               std::numeric_limits<float>::infinity(),
                               -std::numeric_limits<float>::infinity(),
                               6.0e-8f /* an FP16 subnormal */,
                               -3.0e-6f,
                               65520.0f /* FP16 overflow */,
                               std::numeric_limits<float>::max(),
                               std::numeric_limits<float>::denorm_min()};
  for (int i = 0; i < 5000; ++i)
    values.push_back(static_cast<float>(
        std::ldexp(rng.uniform(-2.0, 2.0), static_cast<int>(rng.uniform_int(-30, 30)))));
  for (float x : values) {
    EXPECT_EQ(to_bf16(x).bits, float_to_bf16(x)) << "x = " << x;
    EXPECT_EQ(to_half(x).bits, float_to_fp16(x)) << "x = " << x;
    const float back_bf16 = to_float(to_bf16(x)), back_half = to_float(to_half(x));
    EXPECT_EQ(std::bit_cast<std::uint32_t>(back_bf16),
              std::bit_cast<std::uint32_t>(bf16_to_float(float_to_bf16(x))))
        << "x = " << x;
    EXPECT_EQ(std::bit_cast<std::uint32_t>(back_half),
              std::bit_cast<std::uint32_t>(fp16_to_float(float_to_fp16(x))))
        << "x = " << x;
  }
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(std::isnan(to_float(to_bf16(nan))));
  EXPECT_TRUE(std::isnan(to_float(to_half(nan))));
  EXPECT_EQ(to_float(to_half(65520.0f)), std::numeric_limits<float>::infinity());
  EXPECT_EQ(to_float(to_half(6.0e-8f)), std::ldexp(1.0f, -24)) << "the smallest FP16 subnormal";
  EXPECT_TRUE(std::signbit(to_float(to_bf16(-0.0f))));
  EXPECT_TRUE(std::signbit(to_float(to_half(-0.0f))));
}

}  // namespace
}  // namespace book
