// The AVX2 + FMA path of the weight-only GEMV (gemv.h): 8 floats a register, so a 32-value block
// is four registers. The build's baseline is x86-64-v3, so this file needs no target attribute.
// GCC 12's AVX-512 intrinsics fill unused lanes from a self-initialised variable and then warn
// that it is uninitialised where they are inlined (GCC bug 105593, fixed in 13): silenced for the
// header's own lines only, as in chapters/10_paged_attention/attention_cpu.cc.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop

#include "chapters/14_quantization/gemv.h"
#include "chapters/14_quantization/gemv_kernels.h"

namespace book::quant::detail {
namespace avx2 {
namespace {

using V = __m256;
constexpr int kWidth = 8;
constexpr int kRowsWide = 1;  // 16 registers: one row × four x rows × two partial sums is enough

inline V vzero() { return _mm256_setzero_ps(); }
inline V vset1(float s) { return _mm256_set1_ps(s); }
inline V vload(const float* p) { return _mm256_loadu_ps(p); }
inline V vfma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
inline V vadd(V a, V b) { return _mm256_add_ps(a, b); }
inline V vmul(V a, V b) { return _mm256_mul_ps(a, b); }
inline float vhsum(V a) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}
inline V widen(__m128i bytes8, bool is_signed) {
  return _mm256_cvtepi32_ps(is_signed ? _mm256_cvtepi8_epi32(bytes8)
                                      : _mm256_cvtepu8_epi32(bytes8));
}
inline V vbytes(const std::uint8_t* p) {
  return widen(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)), false);
}
inline void decode_int8s(const std::uint8_t* p, V* w) {
  for (int k = 0; k < 4; ++k)
    w[k] = widen(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p + 8 * k)), true);
}
inline void decode_int8u(const std::uint8_t* p, V* w) {
  for (int k = 0; k < 4; ++k)
    w[k] = widen(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p + 8 * k)), false);
}
// 16 bytes: the low nibbles are values 0..15, the high ones 16..31.
inline void decode_int4(const std::uint8_t* p, V* w) {
  const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  const __m128i mask = _mm_set1_epi8(0x0f);
  const __m128i low = _mm_and_si128(bytes, mask);
  const __m128i high = _mm_and_si128(_mm_srli_epi16(bytes, 4), mask);
  w[0] = widen(low, false);
  w[1] = widen(_mm_srli_si128(low, 8), false);
  w[2] = widen(high, false);
  w[3] = widen(_mm_srli_si128(high, 8), false);
}

#include "chapters/14_quantization/gemv_kernel.inc"

}  // namespace
}  // namespace avx2

void gemv_rows_avx2(const GemvView& v, const GemvCall& c, int r0, int r1) {
  avx2::rows(v, c, r0, r1);
}

}  // namespace book::quant::detail
