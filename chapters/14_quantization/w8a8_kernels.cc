// The W8A8 inner loops: AVX-512 VNNI and AVX2, each compiled for its instruction set by a target
// attribute on its own functions (the build targets x86-64-v3; w8a8.cc calls the VNNI ones only
// where the CPU has VNNI). Register tiles: VNNI 6 tokens × 64 channels (24 accumulators of 32),
// AVX2 4 tokens × 16 channels (8 of 16). The reduction is cut in chunks of kChunk values so that
// a block's weights for one chunk (64 × 256 bytes, 16 KiB) stay in L1 while every token passes.
#include "chapters/14_quantization/w8a8_kernels.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#define BOOK_W8A8_VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni")))
// GCC 12's partial redundancy elimination turns the register tile's 24 loop-carried accumulators
// into copies and spills (42 moves a step, measured in the assembly); without it the loop is the
// 24 vpdpbusd, 4 loads and 6 broadcasts it should be.
#define BOOK_W8A8_TILE __attribute__((optimize("no-tree-pre")))
#define BOOK_W8A8_AVX2 __attribute__((target("avx2,fma")))

namespace book::quant::detail {
namespace {

constexpr int kChunk = 256;  // reduction values per pass over the tokens (a multiple of 4)
constexpr int kVnniTokens = 6, kAvx2Tokens = 4;

std::int32_t load_i32(const void* p) {
  std::int32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// M tokens × 64 channels over `steps` groups of 4 reduction values, added to the partial sums in
// c (the caller starts them at −correction, the unsigned activations' offset). `next`, unless
// null, is the next chunk's weights, fetched into L1 while this one computes: the first pass
// over a chunk would otherwise wait on memory for every step.
template <int M>
BOOK_W8A8_VNNI BOOK_W8A8_TILE void vnni_tile(const std::uint8_t* a, int lda, const std::int8_t* b,
                                             int steps, std::int32_t* c, int ldc,
                                             const __mmask16* mask, const std::int8_t* next) {
  __m512i acc[M][4];  // every loop over it fully unrolled, so that it lives in registers
#pragma GCC unroll 6
  for (int i = 0; i < M; ++i)
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) acc[i][j] = _mm512_maskz_loadu_epi32(mask[j], c + i * ldc + 16 * j);
  for (int s = 0; s < steps; ++s) {
    const std::int8_t* bs = b + 256 * s;
    const __m512i b0 = _mm512_loadu_si512(bs), b1 = _mm512_loadu_si512(bs + 64);
    const __m512i b2 = _mm512_loadu_si512(bs + 128), b3 = _mm512_loadu_si512(bs + 192);
    if (next) {
      for (int line = 0; line < 256; line += 64)
        _mm_prefetch(reinterpret_cast<const char*>(next + 256 * s + line), _MM_HINT_T0);
    }
#pragma GCC unroll 6
    for (int i = 0; i < M; ++i) {
      const __m512i x = _mm512_set1_epi32(load_i32(a + i * lda + 4 * s));
      acc[i][0] = _mm512_dpbusd_epi32(acc[i][0], x, b0);
      acc[i][1] = _mm512_dpbusd_epi32(acc[i][1], x, b1);
      acc[i][2] = _mm512_dpbusd_epi32(acc[i][2], x, b2);
      acc[i][3] = _mm512_dpbusd_epi32(acc[i][3], x, b3);
    }
  }
#pragma GCC unroll 6
  for (int i = 0; i < M; ++i)
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) _mm512_mask_storeu_epi32(c + i * ldc + 16 * j, mask[j], acc[i][j]);
}

BOOK_W8A8_VNNI void vnni_rows(int rows, const std::uint8_t* a, int lda, const std::int8_t* b,
                              int steps, std::int32_t* c, int ldc, const __mmask16* mask,
                              const std::int8_t* next) {
  switch (rows) {
    case 1:
      return vnni_tile<1>(a, lda, b, steps, c, ldc, mask, next);
    case 2:
      return vnni_tile<2>(a, lda, b, steps, c, ldc, mask, next);
    case 3:
      return vnni_tile<3>(a, lda, b, steps, c, ldc, mask, next);
    case 4:
      return vnni_tile<4>(a, lda, b, steps, c, ldc, mask, next);
    case 5:
      return vnni_tile<5>(a, lda, b, steps, c, ldc, mask, next);
    default:
      return vnni_tile<6>(a, lda, b, steps, c, ldc, mask, next);
  }
}

// M tokens × 16 channels over `steps` pairs of reduction values.
template <int M>
BOOK_W8A8_AVX2 BOOK_W8A8_TILE void avx2_tile(const std::int16_t* a, int lda, const std::int8_t* b,
                                             int steps, std::int32_t* c, int ldc, __m256i mask0,
                                             __m256i mask1, bool first) {
  __m256i acc[M][2];
#pragma GCC unroll 4
  for (int i = 0; i < M; ++i) {
    acc[i][0] = first ? _mm256_setzero_si256() : _mm256_maskload_epi32(c + i * ldc, mask0);
    acc[i][1] = first ? _mm256_setzero_si256() : _mm256_maskload_epi32(c + i * ldc + 8, mask1);
  }
  for (int s = 0; s < steps; ++s) {
    // 8 channels × 2 reduction values each, widened to int16: vpmaddwd's pair sums are at most
    // 2 · 127 · 128, far from int32's limit, so nothing saturates.
    const __m256i b0 =
        _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 32 * s)));
    const __m256i b1 =
        _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 32 * s + 16)));
#pragma GCC unroll 4
    for (int i = 0; i < M; ++i) {
      const __m256i x = _mm256_set1_epi32(load_i32(a + i * lda + 2 * s));
      acc[i][0] = _mm256_add_epi32(acc[i][0], _mm256_madd_epi16(x, b0));
      acc[i][1] = _mm256_add_epi32(acc[i][1], _mm256_madd_epi16(x, b1));
    }
  }
#pragma GCC unroll 4
  for (int i = 0; i < M; ++i) {
    _mm256_maskstore_epi32(c + i * ldc, mask0, acc[i][0]);
    _mm256_maskstore_epi32(c + i * ldc + 8, mask1, acc[i][1]);
  }
}

BOOK_W8A8_AVX2 void avx2_rows(int rows, const std::int16_t* a, int lda, const std::int8_t* b,
                              int steps, std::int32_t* c, int ldc, __m256i mask0, __m256i mask1,
                              bool first) {
  switch (rows) {
    case 1:
      return avx2_tile<1>(a, lda, b, steps, c, ldc, mask0, mask1, first);
    case 2:
      return avx2_tile<2>(a, lda, b, steps, c, ldc, mask0, mask1, first);
    case 3:
      return avx2_tile<3>(a, lda, b, steps, c, ldc, mask0, mask1, first);
    default:
      return avx2_tile<4>(a, lda, b, steps, c, ldc, mask0, mask1, first);
  }
}

// Packs [rows][cols] into blocks of `block_n` channels × `group` reduction values, zero padded.
std::vector<std::int8_t> pack(std::span<const std::int8_t> plain, int rows, int cols, int block_n,
                              int group) {
  const int kp = round_up(cols, group), np = round_up(rows, block_n);
  std::vector<std::int8_t> out(static_cast<std::size_t>(np) * kp, 0);
  for (int n = 0; n < rows; ++n)
    for (int k = 0; k < cols; ++k) {
      const std::size_t block = n / block_n, lane = n % block_n, step = k / group;
      out[(block * (kp / group) + step) * block_n * group + lane * group + k % group] =
          plain[static_cast<std::size_t>(n) * cols + k];
    }
  return out;
}

}  // namespace

BOOK_W8A8_AVX2 float absmax_avx2(const float* x, int cols) {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  __m256 m = _mm256_setzero_ps();
  int k = 0;
  for (; k + 8 <= cols; k += 8)
    m = _mm256_max_ps(m, _mm256_andnot_ps(sign, _mm256_loadu_ps(x + k)));
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, m);
  float out = 0;
  for (const float v : lanes) out = std::max(out, v);
  for (; k < cols; ++k) out = std::max(out, std::abs(x[k]));
  return out;
}

BOOK_W8A8_AVX2 void quantize_row_avx2(const float* x, int cols, float s, std::int8_t* q) {
  const __m256 scale = _mm256_set1_ps(s), half = _mm256_set1_ps(0.5f), one = _mm256_set1_ps(1.0f);
  const __m256 sign = _mm256_set1_ps(-0.0f);
  int k = 0;
  for (; k + 8 <= cols; k += 8) {
    const __m256 r = _mm256_div_ps(_mm256_loadu_ps(x + k), scale);  // as the scalar division
    const __m256 t = _mm256_round_ps(r, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    // r − t is exact; a fraction of 0.5 or more moves one away from zero (std::lround's ties).
    const __m256 away =
        _mm256_and_ps(_mm256_cmp_ps(_mm256_andnot_ps(sign, _mm256_sub_ps(r, t)), half, _CMP_GE_OQ),
                      _mm256_or_ps(one, _mm256_and_ps(sign, r)));
    const __m256i v = _mm256_cvttps_epi32(_mm256_add_ps(t, away));
    const __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(q + k), _mm_packs_epi16(w, w));
  }
  for (; k < cols; ++k) q[k] = static_cast<std::int8_t>(std::lround(x[k] / s));
}

std::vector<std::int8_t> pack_vnni(std::span<const std::int8_t> plain, int rows, int cols) {
  return pack(plain, rows, cols, kVnniBlockN, 4);
}

std::vector<std::int8_t> pack_avx2(std::span<const std::int8_t> plain, int rows, int cols) {
  return pack(plain, rows, cols, kAvx2BlockN, 2);
}

void stage_vnni(std::span<const std::int8_t> q, int tokens, int cols,
                std::vector<std::uint8_t>& out) {
  const int k4 = vnni_stride(cols);
  out.assign(static_cast<std::size_t>(tokens) * k4, 128);  // padding meets zero weights
  for (int t = 0; t < tokens; ++t)
    for (int k = 0; k < cols; ++k)
      out[static_cast<std::size_t>(t) * k4 + k] =
          static_cast<std::uint8_t>(q[static_cast<std::size_t>(t) * cols + k] + 128);
}

void stage_avx2(std::span<const std::int8_t> q, int tokens, int cols,
                std::vector<std::int16_t>& out) {
  const int k2 = avx2_stride(cols);
  out.assign(static_cast<std::size_t>(tokens) * k2, 0);
  for (int t = 0; t < tokens; ++t)
    for (int k = 0; k < cols; ++k)
      out[static_cast<std::size_t>(t) * k2 + k] = q[static_cast<std::size_t>(t) * cols + k];
}

BOOK_W8A8_VNNI void vnni_block(const std::uint8_t* a, int lda, int tokens, int k4,
                               const std::int8_t* packed, const std::int32_t* correction, int n,
                               int block, std::int32_t* c, int ldc) {
  const int valid = std::min(kVnniBlockN, n - block * kVnniBlockN);
  __mmask16 mask[4];
  for (int j = 0; j < 4; ++j) {
    const int lanes = std::clamp(valid - 16 * j, 0, 16);
    mask[j] = static_cast<__mmask16>((1u << lanes) - 1u);
  }
  const std::int8_t* b = packed + static_cast<std::size_t>(block) * kVnniBlockN * k4;
  const std::int32_t* corr = correction + block * kVnniBlockN;
  for (int t = 0; t < tokens; ++t)  // start every sum at −128 · Σ_k q_w
    for (int j = 0; j < valid; ++j) c[static_cast<std::size_t>(t) * ldc + j] = -corr[j];
  for (int k0 = 0; k0 < k4; k0 += kChunk) {
    const int steps = std::min(kChunk, k4 - k0) / 4;
    const std::int8_t* chunk = b + static_cast<std::size_t>(k0) * kVnniBlockN;
    // The next chunk of this block, or the first of the next block (contiguous either way),
    // prefetched during the first token group's pass, the one that waits on memory.
    const std::int8_t* next = chunk + static_cast<std::size_t>(steps) * 256;
    for (int t = 0; t < tokens; t += kVnniTokens)
      vnni_rows(std::min(kVnniTokens, tokens - t), a + static_cast<std::size_t>(t) * lda + k0, lda,
                chunk, steps, c + static_cast<std::size_t>(t) * ldc, ldc, mask,
                t == 0 ? next : nullptr);
  }
}

BOOK_W8A8_AVX2 void avx2_block(const std::int16_t* a, int lda, int tokens, int k2,
                               const std::int8_t* packed, int n, int block, std::int32_t* c,
                               int ldc) {
  const int valid = std::min(kAvx2BlockN, n - block * kAvx2BlockN);
  alignas(32) std::int32_t lanes[16];
  for (int j = 0; j < 16; ++j) lanes[j] = j < valid ? -1 : 0;
  const __m256i mask0 = _mm256_load_si256(reinterpret_cast<const __m256i*>(lanes));
  const __m256i mask1 = _mm256_load_si256(reinterpret_cast<const __m256i*>(lanes + 8));
  const std::int8_t* b = packed + static_cast<std::size_t>(block) * kAvx2BlockN * k2;
  for (int k0 = 0; k0 < k2; k0 += kChunk) {
    const int steps = std::min(kChunk, k2 - k0) / 2;
    for (int t = 0; t < tokens; t += kAvx2Tokens)
      avx2_rows(std::min(kAvx2Tokens, tokens - t), a + static_cast<std::size_t>(t) * lda + k0, lda,
                b + static_cast<std::size_t>(k0) * kAvx2BlockN, steps,
                c + static_cast<std::size_t>(t) * ldc, ldc, mask0, mask1, k0 == 0);
  }
}

}  // namespace book::quant::detail
