#include "common/dtype.h"

#include <algorithm>
#include <cctype>
#include <string>

#include "common/check.h"

namespace book {

static_assert(sizeof(BFloat16) == 2 && sizeof(Half) == 2,
              "the 16-bit storage types must be exactly their bits, so arrays of them can be "
              "copied and sent as raw bytes");

std::size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return 4;
    case DType::kF64:
      return 8;
    case DType::kBF16:
    case DType::kF16:
      return 2;
  }
  throw Error("dtype_size: DType value " + std::to_string(static_cast<int>(dtype)) +
              " does not exist");
}

const char* dtype_name(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return "f32";
    case DType::kF64:
      return "f64";
    case DType::kBF16:
      return "bf16";
    case DType::kF16:
      return "f16";
  }
  throw Error("dtype_name: DType value " + std::to_string(static_cast<int>(dtype)) +
              " does not exist");
}

DType parse_dtype(std::string_view name) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  struct Spelling {
    const char* name;
    DType dtype;
  };
  static constexpr Spelling kSpellings[] = {
      {"f32", DType::kF32},       {"fp32", DType::kF32},   {"float32", DType::kF32},
      {"float", DType::kF32},     {"f64", DType::kF64},    {"fp64", DType::kF64},
      {"float64", DType::kF64},   {"double", DType::kF64}, {"bf16", DType::kBF16},
      {"bfloat16", DType::kBF16}, {"f16", DType::kF16},    {"fp16", DType::kF16},
      {"float16", DType::kF16},   {"half", DType::kF16},
  };
  for (const auto& spelling : kSpellings)
    if (lower == spelling.name) return spelling.dtype;
  throw Error("unknown number format '" + std::string(name) +
              "': valid ones are f32, f64, bf16 and f16 (also fp32/float32/float, fp64/float64/"
              "double, bfloat16, fp16/float16/half)");
}

}  // namespace book
