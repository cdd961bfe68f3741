#include "chapters/04_training_baseline/precision.h"

#include <bit>
#include <cmath>

#include "common/check.h"

namespace book::train {

const char* precision_name(Precision precision) {
  switch (precision) {
    case Precision::kFP32:
      return "fp32";
    case Precision::kBF16:
      return "bf16";
    case Precision::kFP16:
      return "fp16";
  }
  return "?";
}

std::uint16_t encode(Precision precision, float value) {
  BOOK_CHECK(precision != Precision::kFP32,
             "encode: FP32 has no 16-bit encoding; use BF16 or FP16");
  return precision == Precision::kBF16 ? float_to_bf16(value) : float_to_fp16(value);
}

float decode(Precision precision, std::uint16_t bits) {
  BOOK_CHECK(precision != Precision::kFP32,
             "decode: FP32 has no 16-bit encoding; use BF16 or FP16");
  return precision == Precision::kBF16 ? bf16_to_float(bits) : fp16_to_float(bits);
}

float round_to(Precision precision, float value) {
  return precision == Precision::kFP32 ? value : decode(precision, encode(precision, value));
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
