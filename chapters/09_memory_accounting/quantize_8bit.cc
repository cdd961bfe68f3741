// Block-wise 8-bit codes: linear for Adam's m, logarithmic for its v.
#include "chapters/09_memory_accounting/quantize_8bit.h"

#include <algorithm>
#include <cmath>

#include "common/check.h"

namespace book::mem {

float quantize_signed(std::span<const float> m, std::span<std::int8_t> q) {
  BOOK_CHECK(m.size() == q.size(),
             "quantize_signed: " << m.size() << " values, " << q.size() << " codes");
  float absmax = 0;
  for (float x : m) absmax = std::max(absmax, std::fabs(x));
  for (std::size_t i = 0; i < m.size(); ++i)
    q[i] = absmax == 0 ? 0 : static_cast<std::int8_t>(std::lround(127.0f * m[i] / absmax));
  return absmax;
}

void dequantize_signed(std::span<const std::int8_t> q, float scale, std::span<float> m) {
  BOOK_CHECK(m.size() == q.size(),
             "dequantize_signed: " << q.size() << " codes, " << m.size() << " values");
  for (std::size_t i = 0; i < q.size(); ++i) m[i] = scale * static_cast<float>(q[i]) / 127.0f;
}

float quantize_log(std::span<const float> v, std::span<std::uint8_t> q) {
  BOOK_CHECK(v.size() == q.size(),
             "quantize_log: " << v.size() << " values, " << q.size() << " codes");
  float absmax = 0;
  for (float x : v) {
    BOOK_CHECK(x >= 0 && std::isfinite(x), "quantize_log: v must be finite and >= 0, got " << x);
    absmax = std::max(absmax, x);
  }
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (v[i] == 0 || absmax == 0) {
      q[i] = 255;
      continue;
    }
    const double code = std::round(-8.0 * std::log2(static_cast<double>(v[i]) / absmax));
    q[i] = code > 254 ? 255 : static_cast<std::uint8_t>(code);
  }
  return absmax;
}

void dequantize_log(std::span<const std::uint8_t> q, float scale, std::span<float> v) {
  BOOK_CHECK(v.size() == q.size(),
             "dequantize_log: " << q.size() << " codes, " << v.size() << " values");
  for (std::size_t i = 0; i < q.size(); ++i)
    v[i] = q[i] == 255 ? 0.0f : static_cast<float>(scale * std::exp2(-q[i] / 8.0));
}

}  // namespace book::mem
