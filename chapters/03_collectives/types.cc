#include "chapters/03_collectives/types.h"

#include <algorithm>
#include <cstdint>
#include <bit>
#include <cmath>
#include <cstring>

#include "common/check.h"
#include "common/enum_check.h"

namespace book::coll {

const char* op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
      return "sum";
    case ReduceOp::kAvg:
      return "avg";
    case ReduceOp::kMax:
      return "max";
  }
  return "?";
}

void check_reduce_op(ReduceOp op, const char* where) {
  check_enum(op, ReduceOp::kSum, ReduceOp::kMax, "coll::ReduceOp", where);
}

void check_algorithm(Algorithm algorithm, const char* where) {
  check_enum(algorithm, Algorithm::kAutomatic, Algorithm::kRingFused, "coll::Algorithm", where);
}

const char* algorithm_name(Algorithm algorithm) {
  switch (algorithm) {
    case Algorithm::kAutomatic:
      return "automatic";
    case Algorithm::kRing:
      return "ring";
    case Algorithm::kTree:
      return "tree";
    case Algorithm::kNaive:
      return "naive";
    case Algorithm::kNative:
      return "native";
    case Algorithm::kRingFused:
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

// d[i] = combine(d[i], s[i]) over arrays that do not overlap. Blocks of a fixed 16 elements,
// because GCC at -O2 (its "very cheap" vectoriser) only vectorises a loop whose trip count it
// knows and whose pointers cannot alias: the scalar loop was one float per instruction and made
// the fused ring's reduction slower than the copy it replaces. Element by element, so the sums
// are the same bits as the plain loop's.
template <typename T, typename Combine>
void combine_disjoint(T* __restrict d, const T* __restrict s, std::size_t n, Combine combine) {
  constexpr std::size_t kBlock = 16;
  std::size_t i = 0;
  for (; i + kBlock <= n; i += kBlock)
    for (std::size_t j = 0; j < kBlock; ++j) d[i + j] = combine(d[i + j], s[i + j]);
  for (; i < n; ++i) d[i] = combine(d[i], s[i]);
}

template <typename T, typename Combine>
void combine_into(T* d, const T* s, std::size_t n, Combine combine) {
  const auto from = [](const T* p) { return reinterpret_cast<std::uintptr_t>(p); };
  const bool overlap = from(d) < from(s + n) && from(s) < from(d + n);
  if (!overlap) return combine_disjoint(d, s, n, combine);
  for (std::size_t i = 0; i < n; ++i) d[i] = combine(d[i], s[i]);  // d == s, say: in order
}

template <typename T, typename Load, typename Store>
void reduce_typed(void* dst, const void* src, std::size_t n, ReduceOp op, Load load, Store store) {
  T* d = static_cast<T*>(dst);
  const T* s = static_cast<const T*>(src);
  if (op == ReduceOp::kMax) {
    combine_into(d, s, n, [&](T x, T y) { return store(std::max(load(x), load(y))); });
  } else {
    combine_into(d, s, n, [&](T x, T y) { return store(load(x) + load(y)); });
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
  check_reduce_op(op, "reduce_into");  // an unknown op must not become a sum
  switch (dst.dtype) {
    case DType::kF32:
      reduce_typed<float>(
          dst.data, src.data, dst.count, op, [](float x) { return x; }, [](float x) { return x; });
      break;
    case DType::kF64:
      reduce_typed<double>(
          dst.data, src.data, dst.count, op, [](double x) { return x; },
          [](double x) { return x; });
      break;
    case DType::kBF16:
      reduce_typed<BFloat16>(
          dst.data, src.data, dst.count, op, [](BFloat16 x) { return to_float(x); },
          [](float x) { return to_bf16(x); });
      break;
    case DType::kF16:
      reduce_typed<Half>(
          dst.data, src.data, dst.count, op, [](Half x) { return to_float(x); },
          [](float x) { return to_half(x); });
      break;
  }
}

void scale(Buffer data, double factor) {
  const auto factor32 = static_cast<float>(factor);
  for (std::size_t i = 0; i < data.count; ++i) {
    switch (data.dtype) {
      case DType::kF32:
        static_cast<float*>(data.data)[i] *= factor32;
        break;
      case DType::kF64:
        static_cast<double*>(data.data)[i] *= factor;
        break;
      case DType::kBF16: {
        auto& x = static_cast<BFloat16*>(data.data)[i];
        x = to_bf16(to_float(x) * factor32);
        break;
      }
      case DType::kF16: {
        auto& x = static_cast<Half*>(data.data)[i];
        x = to_half(to_float(x) * factor32);
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
