#include "chapters/10_paged_attention/kv_precision.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "common/check.h"

namespace book::kv {

const char* kv_precision_name(KvPrecision precision) {
  return precision == KvPrecision::kInt8 ? "int8" : "fp32";
}

int kv_precision_bytes(KvPrecision precision) { return precision == KvPrecision::kInt8 ? 1 : 4; }

std::int64_t kv_bytes_per_token(const KvShape& shape, KvPrecision precision) {
  shape.validate();
  return shape.numbers_per_token() * kv_precision_bytes(precision);
}

std::int64_t kv_int8_scale_bytes(const KvShape& shape) {
  shape.validate();
  return 2 * std::int64_t{shape.n_layer} * shape.n_head * static_cast<std::int64_t>(sizeof(float));
}

void KvInt8Scales::validate(const KvShape& shape) const {
  shape.validate();
  const std::size_t want = static_cast<std::size_t>(shape.n_layer) * shape.n_head;
  using Named = std::pair<const char*, const std::vector<float>*>;
  for (const auto& [name, scales] : {Named{"key", &keys}, Named{"value", &values}}) {
    BOOK_CHECK(scales->size() == want,
               "KvInt8Scales: " << scales->size() << " " << name << " scales for " << shape.n_layer
                                << " layers × " << shape.n_head
                                << " heads; need one per (layer, head), " << want);
    for (std::size_t i = 0; i < want; ++i) {
      const float s = (*scales)[i];
      BOOK_CHECK(std::isfinite(s) && s > 0,
                 "KvInt8Scales: the " << name << " scale of layer " << i / shape.n_head << ", head "
                                      << i % shape.n_head << " is " << s
                                      << "; a scale must be finite and > 0 (calibrate it from the "
                                         "FP32 model's keys and values)");
    }
  }
}

std::int8_t kv_int8_quantize(float x, float scale) {
  // Saturate before rounding: x / scale may be far past any integer type (an outlier the
  // calibration never saw), and 127 is where it ends anyway.
  const float q =
      std::clamp(x / scale, static_cast<float>(-kKvInt8Max), static_cast<float>(kKvInt8Max));
  return static_cast<std::int8_t>(std::lround(q));
}

}  // namespace book::kv
