// The AVX-512 path of the weight-only GEMV (gemv.h): 16 floats a register, so a 32-value block is
// two registers, and 32 registers let two rows share a tile of four x rows. The build targets
// x86-64-v3, so this file's functions are compiled for AVX-512F by a pragma placed after every
// #include: only the functions defined below it are AVX-512 code, never an inline function from
// a header that another file's copy could be merged with (gemv_avx2.cc, the plain path and the
// library's users stay x86-64-v3). Called only where cpu_isa() is kAvx512.
// GCC 12's AVX-512 intrinsics fill unused lanes from a self-initialised variable and then warn
// that it is uninitialised where they are inlined (GCC bug 105593, fixed in 13): silenced for the
// header's own lines only, as in chapters/10_paged_attention/attention_cpu.cc.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop

#include <cstdint>

#include "chapters/14_quantization/gemv.h"
#include "chapters/14_quantization/gemv_kernels.h"

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx512f")
#endif

namespace book::quant::detail {
namespace avx512 {
namespace {

using V = __m512;
constexpr int kWidth = 16;
constexpr int kRowsWide = 2;

inline V vzero() { return _mm512_setzero_ps(); }
inline V vset1(float s) { return _mm512_set1_ps(s); }
inline V vload(const float* p) { return _mm512_loadu_ps(p); }
inline V vfma(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
inline V vadd(V a, V b) { return _mm512_add_ps(a, b); }
inline V vmul(V a, V b) { return _mm512_mul_ps(a, b); }
inline float vhsum(V a) {
  const __m256 half = _mm256_add_ps(
      _mm512_castps512_ps256(a), _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(a), 1)));
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(half), _mm256_extractf128_ps(half, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}
inline __m128i load16(const std::uint8_t* p) {
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
}
inline V vbytes(const std::uint8_t* p) {
  return _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(load16(p)));
}
inline void decode_int8s(const std::uint8_t* p, V* w) {
  w[0] = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(load16(p)));
  w[1] = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(load16(p + 16)));
}
inline void decode_int8u(const std::uint8_t* p, V* w) {
  w[0] = _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(load16(p)));
  w[1] = _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(load16(p + 16)));
}
// 16 bytes: the low nibbles are values 0..15, the high ones 16..31.
inline void decode_int4(const std::uint8_t* p, V* w) {
  const __m128i bytes = load16(p);
  const __m128i mask = _mm_set1_epi8(0x0f);
  w[0] = _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_and_si128(bytes, mask)));
  w[1] = _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_and_si128(_mm_srli_epi16(bytes, 4), mask)));
}

#include "chapters/14_quantization/gemv_kernel.inc"

}  // namespace
}  // namespace avx512

void gemv_rows_avx512(const GemvView& v, const GemvCall& c, int r0, int r1) {
  avx512::rows(v, c, r0, r1);
}

}  // namespace book::quant::detail

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
