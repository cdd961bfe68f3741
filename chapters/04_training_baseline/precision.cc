#include "chapters/04_training_baseline/precision.h"

#include <cmath>

#include "common/check.h"

namespace book::train {

namespace {

bool is_16_bit(DType precision) { return precision == DType::kBF16 || precision == DType::kF16; }

}  // namespace

std::uint16_t encode(DType precision, float value) {
  BOOK_CHECK(is_16_bit(precision),
             "encode: " << dtype_name(precision) << " has no 16-bit encoding; use bf16 or f16");
  return precision == DType::kBF16 ? float_to_bf16(value) : float_to_fp16(value);
}

float decode(DType precision, std::uint16_t bits) {
  BOOK_CHECK(is_16_bit(precision),
             "decode: " << dtype_name(precision) << " has no 16-bit encoding; use bf16 or f16");
  return precision == DType::kBF16 ? bf16_to_float(bits) : fp16_to_float(bits);
}

float round_to(DType precision, float value) {
  return is_16_bit(precision) ? decode(precision, encode(precision, value)) : value;
}

LossScaler::LossScaler(Options options) : options_(options), scale_(options.initial_scale) {
  BOOK_CHECK(options.min_scale > 0 && options.min_scale <= options.initial_scale &&
                 options.initial_scale <= options.max_scale,
             "LossScaler: need 0 < min_scale <= initial_scale <= max_scale, got "
                 << options.min_scale << ", " << options.initial_scale << ", "
                 << options.max_scale);
  BOOK_CHECK(options.growth_factor > 1 && options.backoff_factor > 0 && options.backoff_factor < 1,
             "LossScaler: need growth_factor > 1 and 0 < backoff_factor < 1, got "
                 << options.growth_factor << " and " << options.backoff_factor);
  BOOK_CHECK(options.growth_interval >= 1,
             "LossScaler: growth_interval must be >= 1, got " << options.growth_interval);
}

void LossScaler::restore(float scale, int clean_steps) {
  BOOK_CHECK(scale >= options_.min_scale && scale <= options_.max_scale && clean_steps >= 0 &&
                 clean_steps < options_.growth_interval,
             "LossScaler::restore: state (scale " << scale << ", clean steps " << clean_steps
                                                  << ") is outside this scaler's options");
  scale_ = scale;
  clean_steps_ = clean_steps;
}

}  // namespace book::train
