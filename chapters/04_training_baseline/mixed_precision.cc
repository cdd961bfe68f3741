#include "chapters/04_training_baseline/mixed_precision.h"

#include <cmath>

#include "common/check.h"

namespace book::train {

void encode(Precision precision, std::span<const float> values, std::span<std::uint16_t> bits) {
  BOOK_CHECK(precision != Precision::kFP32,
             "encode: FP32 has no 16-bit encoding; use BF16 or FP16");
  BOOK_CHECK(values.size() == bits.size(), "encode: " << values.size() << " values but room for "
                                                      << bits.size() << " 16-bit patterns");
  for (std::size_t i = 0; i < values.size(); ++i) bits[i] = encode(precision, values[i]);
}

void decode(Precision precision, std::span<const std::uint16_t> bits, std::span<float> values) {
  BOOK_CHECK(precision != Precision::kFP32,
             "decode: FP32 has no 16-bit encoding; use BF16 or FP16");
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
