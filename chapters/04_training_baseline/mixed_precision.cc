#include "chapters/04_training_baseline/mixed_precision.h"

#include <cmath>

#include "common/check.h"

namespace book::train {

namespace {

void check_16_bit(const char* who, DType precision) {
  BOOK_CHECK(precision == DType::kBF16 || precision == DType::kF16,
             who << ": " << dtype_name(precision) << " has no 16-bit encoding; use bf16 or f16");
}

}  // namespace

void encode(DType precision, std::span<const float> values, std::span<std::uint16_t> bits) {
  check_16_bit("encode", precision);
  BOOK_CHECK(values.size() == bits.size(), "encode: " << values.size() << " values but room for "
                                                      << bits.size() << " 16-bit patterns");
  for (std::size_t i = 0; i < values.size(); ++i) bits[i] = encode(precision, values[i]);
}

void decode(DType precision, std::span<const std::uint16_t> bits, std::span<float> values) {
  check_16_bit("decode", precision);
  BOOK_CHECK(values.size() == bits.size(), "decode: " << bits.size()
                                                      << " 16-bit patterns but room for "
                                                      << values.size() << " values");
  for (std::size_t i = 0; i < bits.size(); ++i) values[i] = decode(precision, bits[i]);
}

bool all_finite(std::span<const float> values) {
  for (float v : values)
    if (!std::isfinite(v)) return false;
  return true;
}

void unscale(std::span<float> grads, float loss_scale) {
  BOOK_CHECK(loss_scale > 0, "unscale: the loss scale must be positive, got " << loss_scale);
  for (float& g : grads) g /= loss_scale;
}

}  // namespace book::train
