// Exercises quant.per_channel_int8, quant.int4_pack, quant.int8_gemv, quant.smooth_scales and
// quant.awq_search: write them from chapters/14_quantization/quant.h.
//
// per_channel_int8: check_scheme and check_finite first; per row s = max|w| / 127 (1 for an
// all-zero row), q = lround(w / s) stored as a two's-complement byte. int4_pack: byte i = value 2i
// | value 2i+1 << 4; refuse an odd count or a value > 15. int8_gemv: per row, per group, Σ q·x in
// column order, times the group's scale, groups added in order. smooth_scales: s_j = a_j^alpha /
// w_j^(1 - alpha), 1 where either is 0. awq_search: for alpha on the grid, s_j = mean|x_j|^alpha
// normalised by sqrt(max s · min s); quantise W·diag(s), dequantise, divide by s, measure the
// mean squared output error; keep the best. Test:
// bazel test --config=exercises //tests/14_quantization/...
#include "chapters/14_quantization/quant.h"

#include "common/check.h"

namespace book::quant {

QuantizedMatrix quantize_per_channel_int8(std::span<const float> w, int rows, int cols) {
  (void)w, (void)rows, (void)cols;
  BOOK_NOT_IMPLEMENTED("quant.per_channel_int8", "exercises/14_quantization/quant.cc",
                       "chapters/14_quantization/README.md, section Round to nearest, per channel");
}

std::vector<std::uint8_t> pack_int4(std::span<const std::uint8_t> nibbles) {
  (void)nibbles;
  BOOK_NOT_IMPLEMENTED("quant.int4_pack", "exercises/14_quantization/quant.cc",
                       "chapters/14_quantization/README.md, section Two weights a byte");
}

std::vector<std::uint8_t> unpack_int4(std::span<const std::uint8_t> packed) {
  (void)packed;
  BOOK_NOT_IMPLEMENTED("quant.int4_pack", "exercises/14_quantization/quant.cc",
                       "chapters/14_quantization/README.md, section Two weights a byte");
}

void int8_gemv(const QuantizedMatrix& w, std::span<const float> x, std::span<float> y) {
  (void)w, (void)x, (void)y;
  BOOK_NOT_IMPLEMENTED("quant.int8_gemv", "exercises/14_quantization/quant.cc",
                       "chapters/14_quantization/README.md, section Weight-only GEMV");
}

std::vector<float> smooth_scales(std::span<const float> activation_absmax,
                                 std::span<const float> weight_absmax, double alpha) {
  (void)activation_absmax, (void)weight_absmax, (void)alpha;
  BOOK_NOT_IMPLEMENTED("quant.smooth_scales", "exercises/14_quantization/quant.cc",
                       "chapters/14_quantization/README.md, section SmoothQuant");
}

AwqSearch awq_search(std::span<const float> w, int rows, int cols, std::span<const float> x,
                     int tokens, const Scheme& scheme, int grid) {
  (void)w, (void)rows, (void)cols, (void)x, (void)tokens, (void)scheme, (void)grid;
  BOOK_NOT_IMPLEMENTED("quant.awq_search", "exercises/14_quantization/quant.cc",
                       "chapters/14_quantization/README.md, section AWQ");
}

}  // namespace book::quant
