#include "chapters/03_collectives/types.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

#include "common/check.h"

namespace book::coll {

BFloat16 to_bf16(float value) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
  if (std::isnan(value)) return {static_cast<std::uint16_t>((bits >> 16) | 0x40)};
  // Round to nearest even: add 0x7fff plus the lowest kept bit, then truncate.
  const std::uint32_t rounded = bits + 0x7fffu + ((bits >> 16) & 1u);
  return {static_cast<std::uint16_t>(rounded >> 16)};
}

float to_float(BFloat16 value) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(value.bits) << 16);
}

Half to_half(float value) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
  const std::uint16_t sign = static_cast<std::uint16_t>((bits >> 16) & 0x8000u);
  const float magnitude = std::fabs(value);
  if (std::isnan(value)) return {static_cast<std::uint16_t>(sign | 0x7e00u)};
  if (magnitude >= 65520.0f) return {static_cast<std::uint16_t>(sign | 0x7c00u)};  // rounds to inf
  if (magnitude < 0x1.0p-14f) {
    // Subnormal: a multiple of 2^-24; nearbyint rounds to nearest even in the default mode.
    const auto units = static_cast<std::uint16_t>(std::nearbyint(magnitude * 0x1.0p24f));
    return {static_cast<std::uint16_t>(sign | units)};
  }
  const std::uint32_t exponent = ((bits >> 23) & 0xffu) - 127 + 15;
  std::uint32_t mantissa = bits & 0x7fffffu;
  std::uint32_t half = (exponent << 10) | (mantissa >> 13);
  const std::uint32_t rest = mantissa & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;  // may carry into the exponent
  return {static_cast<std::uint16_t>(sign | half)};
}

float to_float(Half value) {
  const std::uint32_t sign = static_cast<std::uint32_t>(value.bits & 0x8000u) << 16;
  const std::uint32_t exponent = (value.bits >> 10) & 0x1fu;
  const std::uint32_t mantissa = value.bits & 0x3ffu;
  if (exponent == 0) {
    const float magnitude = static_cast<float>(mantissa) * 0x1.0p-24f;
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 31) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  return std::bit_cast<float>(sign | ((exponent - 15 + 127) << 23) | (mantissa << 13));
}

std::size_t dtype_size(DType dtype) { return dtype == DType::f32 ? 4 : 2; }

const char* dtype_name(DType dtype) {
  switch (dtype) {
    case DType::f32:
      return "f32";
    case DType::bf16:
      return "bf16";
    case DType::f16:
      return "f16";
  }
  return "?";
}

const char* op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum:
      return "sum";
    case ReduceOp::avg:
      return "avg";
    case ReduceOp::max:
      return "max";
  }
  return "?";
}

const char* algorithm_name(Algorithm algorithm) {
  switch (algorithm) {
    case Algorithm::automatic:
      return "automatic";
    case Algorithm::ring:
      return "ring";
    case Algorithm::tree:
      return "tree";
    case Algorithm::naive:
      return "naive";
    case Algorithm::native:
      return "native";
    case Algorithm::ring_fused:
      return "ring_fused";
  }
  return "?";
}

Shard shard_of(std::size_t count, int parts, int index) {
  BOOK_CHECK(parts >= 1 && index >= 0 && index < parts,
             "shard " << index << " of " << parts << " parts does not exist");
  const std::size_t p = static_cast<std::size_t>(parts), i = static_cast<std::size_t>(index);
  const std::size_t base = count / p, extra = count % p;
  return {i * base + std::min(i, extra), base + (i < extra ? 1 : 0)};
}

namespace {

template <typename T, typename Load, typename Store>
void reduce_typed(void* dst, const void* src, std::size_t n, ReduceOp op, Load load, Store store) {
  T* d = static_cast<T*>(dst);
  const T* s = static_cast<const T*>(src);
  if (op == ReduceOp::max) {
    for (std::size_t i = 0; i < n; ++i) d[i] = store(std::max(load(d[i]), load(s[i])));
  } else {
    for (std::size_t i = 0; i < n; ++i) d[i] = store(load(d[i]) + load(s[i]));
  }
}

void check_same(const Buffer& dst, const ConstBuffer& src, const char* what) {
  BOOK_CHECK(dst.count == src.count && dst.dtype == src.dtype,
             what << ": destination has " << dst.count << " " << dtype_name(dst.dtype)
                  << " elements but source has " << src.count << " " << dtype_name(src.dtype));
}

}  // namespace

void reduce_into(Buffer dst, ConstBuffer src, ReduceOp op) {
  check_same(dst, src, "reduce_into");
  switch (dst.dtype) {
    case DType::f32:
      reduce_typed<float>(
          dst.data, src.data, dst.count, op, [](float x) { return x; }, [](float x) { return x; });
      break;
    case DType::bf16:
      reduce_typed<BFloat16>(
          dst.data, src.data, dst.count, op, [](BFloat16 x) { return to_float(x); },
          [](float x) { return to_bf16(x); });
      break;
    case DType::f16:
      reduce_typed<Half>(
          dst.data, src.data, dst.count, op, [](Half x) { return to_float(x); },
          [](float x) { return to_half(x); });
      break;
  }
}

void scale(Buffer data, float factor) {
  for (std::size_t i = 0; i < data.count; ++i) {
    switch (data.dtype) {
      case DType::f32:
        static_cast<float*>(data.data)[i] *= factor;
        break;
      case DType::bf16: {
        auto& x = static_cast<BFloat16*>(data.data)[i];
        x = to_bf16(to_float(x) * factor);
        break;
      }
      case DType::f16: {
        auto& x = static_cast<Half*>(data.data)[i];
        x = to_half(to_float(x) * factor);
        break;
      }
    }
  }
}

void copy_into(Buffer dst, ConstBuffer src) {
  check_same(dst, src, "copy_into");
  if (dst.count) std::memcpy(dst.data, src.data, dst.bytes());
}

}  // namespace book::coll
