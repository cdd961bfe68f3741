// The fast CPU paged attention. Why it is faster than the reference: FMAs over head_dim with four
// positions in flight (four independent dependency chains), a vector exp over the contiguous
// scores instead of libm's scalar one (which would cost more than the dot products), one pass over
// each block's keys and one over its values, the division by the softmax sum done once per
// output element, and threads over (query, head) pairs. Three copies of the passes (plain loops,
// AVX2 + FMA, AVX-512), one chosen per kernel object, so that a binary built for x86-64-v3 still
// uses 16-float registers on a CPU that has them.
#include "chapters/10_paged_attention/attention_cpu.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "common/check.h"
#include "common/cpu.h"

#if defined(__AVX2__) && defined(__FMA__)
#define BOOK_KV_AVX2 1
#endif
// AVX-512 is compiled per function (target attribute), never for the whole file: the functions
// inlined from headers here (std::max, ...) must not be AVX-512 code that another file's call
// could pick up on a CPU without it.
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define BOOK_KV_AVX512 1
#define BOOK_KV_TARGET_AVX512 __attribute__((target("avx512f")))
#endif
#if defined(BOOK_KV_AVX2) || defined(BOOK_KV_AVX512)
// GCC 12's AVX-512 intrinsics fill unused lanes from a self-initialised variable and then warn
// that it is uninitialised where they are inlined (GCC bug 105593, fixed in 13): silenced for the
// header's own lines only.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#endif

namespace book::kv {
namespace {

// exp(x) for x <= 0 as 2^n · p(r), r = x − n·ln2 in [−ln2/2, ln2/2], p Cephes' degree-7
// polynomial (relative error about 1e-7). Scalar and vector versions do the same operations in
// the same order, each an FMA where the other has one, so they round identically.
constexpr float kLog2e = 1.44269504088896341f, kLn2Hi = 0.693359375f, kLn2Lo = -2.12194440e-4f;
constexpr float kExpLow = -87.0f;  // below this exp underflows; clamp (e^-87 ≈ 1.6e-38)
constexpr float kP0 = 1.9875691500e-4f, kP1 = 1.3981999507e-3f, kP2 = 8.3334519073e-3f,
                kP3 = 4.1665795894e-2f, kP4 = 1.6666665459e-1f, kP5 = 5.0000001201e-1f;

float exp_scalar(float x) {
  x = std::max(x, kExpLow);
  const float n = std::nearbyint(x * kLog2e);
  float r = std::fma(-n, kLn2Hi, x);
  r = std::fma(-n, kLn2Lo, r);
  float p = std::fma(kP0, r, kP1);
  p = std::fma(p, r, kP2);
  p = std::fma(p, r, kP3);
  p = std::fma(p, r, kP4);
  p = std::fma(p, r, kP5);
  p = std::fma(p, r * r, r + 1.0f);
  return std::ldexp(p, static_cast<int>(n));
}

// Each path is a struct of the three passes, all with the same contracts:
//   scores(q, keys, next, n, d, scale, s): s[t] = q·K_t · scale for one tile's n key rows of d
//                  numbers, prefetching row t of `next` (the next tile's keys) meanwhile;
//   softmax(s, n): s[t] = exp(s[t] − max) in place, returns Σ s (over the contiguous scores: the
//                  order depends only on the context length);
//   weighted_sum(p, values, next, n, d, acc): acc[0, d) += Σ_t p[t] · V_t over one tile's n value
//                  rows (and the same prefetch of `next`),
//                  each element a chain of FMAs in position order, so block boundaries do not
//                  change it.
// Within a path, one accumulator per position whatever the caller groups together, so the result
// of a position never depends on its neighbours.

// Software prefetch. The kernel reads K and V a tile of kTile positions at a time and, while it
// reads one tile, asks for the next tile's rows (wherever the table puts them) to be brought into
// L2. A paged block is a short run of memory at a random place, which the hardware prefetcher must
// find afresh every time (and it stops at page boundaries): without this, the paged cache ran at
// 0.70-0.75x the contiguous speed on the bench's shapes that stream from memory (README). Into L2
// (prefetcht1) rather than L1, whose few miss buffers the requests would queue for. The contiguous
// cache runs the same code (its next tile is the next 16 positions of its one run), so the
// comparison stays like for like.
constexpr int kTile = 16;  // positions: 8 KB of one head's keys at head_dim 128

// The next tile's rows for one head: `count` rows of d numbers from `rows` (none if null).
struct NextRows {
  const float* rows = nullptr;
  int count = 0;
};

// Asks for rows [t, t + r) of `next` (those it has) to be brought into L2, one request per line.
inline void prefetch_rows(NextRows next, int t, int r, int d) {
  if (next.rows == nullptr || t >= next.count) return;
  const char* first = reinterpret_cast<const char*>(next.rows + static_cast<std::size_t>(t) * d);
  const std::size_t bytes =
      static_cast<std::size_t>(std::min(r, next.count - t)) * d * sizeof(float);
  for (std::size_t byte = 0; byte < bytes; byte += 64) __builtin_prefetch(first + byte, 0, 2);
}

struct Plain {
  static float dot(const float* q, const float* k, int d) {
    float sum = 0;
    for (int i = 0; i < d; ++i) sum = std::fma(q[i], k[i], sum);
    return sum;
  }
  static void scores(const float* q, const float* keys, NextRows next, int n, int d, float scale,
                     float* s) {
    for (int t = 0; t < n; ++t) {
      prefetch_rows(next, t, 1, d);
      s[t] = dot(q, keys + static_cast<std::size_t>(t) * d, d) * scale;
    }
  }
  static float softmax(float* s, int n) {
    float max_score = -std::numeric_limits<float>::infinity();
    for (int t = 0; t < n; ++t) max_score = std::max(max_score, s[t]);
    float sum = 0;
    for (int t = 0; t < n; ++t) sum += (s[t] = exp_scalar(s[t] - max_score));
    return sum;
  }
  static void weighted_sum(const float* p, const float* values, NextRows next, int n, int d,
                           float* acc) {
    prefetch_rows(next, 0, n, d);
    for (int i = 0; i < d; ++i)
      for (int t = 0; t < n; ++t)
        acc[i] = std::fma(p[t], values[static_cast<std::size_t>(t) * d + i], acc[i]);
  }
};

#ifdef BOOK_KV_AVX2
struct Avx2 {
  static __m256 exp(__m256 x) {
    x = _mm256_max_ps(x, _mm256_set1_ps(kExpLow));
    const __m256 n =
        _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(kLog2e)), _MM_FROUND_TO_NEAREST_INT);
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(kLn2Hi), x);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(kLn2Lo), r);
    __m256 p = _mm256_fmadd_ps(_mm256_set1_ps(kP0), r, _mm256_set1_ps(kP1));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kP2));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kP3));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kP4));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kP5));
    p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
    // 2^n: n + 127 in the exponent field (n >= -126 after the clamp, so no denormals).
    const __m256i exponent =
        _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    return _mm256_mul_ps(p, _mm256_castsi256_ps(exponent));
  }
  static float horizontal_sum(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    return _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));
  }
  static float dot(const float* q, const float* k, int d) {
    int i = 0;
    __m256 acc = _mm256_setzero_ps();
    for (; i + 8 <= d; i += 8)
      acc = _mm256_fmadd_ps(_mm256_loadu_ps(q + i), _mm256_loadu_ps(k + i), acc);
    float sum = horizontal_sum(acc);
    for (; i < d; ++i) sum = std::fma(q[i], k[i], sum);
    return sum;
  }
  static void scores(const float* q, const float* keys, NextRows next, int n, int d, float scale,
                     float* s) {
    int t = 0;
    if (d % 8 == 0) {  // four positions in flight: four independent FMA chains
      for (; t + 4 <= n; t += 4) {
        prefetch_rows(next, t, 4, d);
        const float* k = keys + static_cast<std::size_t>(t) * d;
        __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
        for (int i = 0; i < d; i += 8) {
          const __m256 qi = _mm256_loadu_ps(q + i);
          a0 = _mm256_fmadd_ps(qi, _mm256_loadu_ps(k + i), a0);
          a1 = _mm256_fmadd_ps(qi, _mm256_loadu_ps(k + d + i), a1);
          a2 = _mm256_fmadd_ps(qi, _mm256_loadu_ps(k + 2 * d + i), a2);
          a3 = _mm256_fmadd_ps(qi, _mm256_loadu_ps(k + 3 * d + i), a3);
        }
        s[t] = horizontal_sum(a0) * scale;
        s[t + 1] = horizontal_sum(a1) * scale;
        s[t + 2] = horizontal_sum(a2) * scale;
        s[t + 3] = horizontal_sum(a3) * scale;
      }
    }
    for (; t < n; ++t) {
      prefetch_rows(next, t, 1, d);
      s[t] = dot(q, keys + static_cast<std::size_t>(t) * d, d) * scale;
    }
  }
  static float softmax(float* s, int n) {
    float max_score = -std::numeric_limits<float>::infinity();
    for (int t = 0; t < n; ++t) max_score = std::max(max_score, s[t]);
    int t = 0;
    const __m256 m = _mm256_set1_ps(max_score);
    __m256 acc = _mm256_setzero_ps();
    for (; t + 8 <= n; t += 8) {
      const __m256 p = exp(_mm256_sub_ps(_mm256_loadu_ps(s + t), m));
      _mm256_storeu_ps(s + t, p);
      acc = _mm256_add_ps(acc, p);
    }
    float sum = horizontal_sum(acc);
    for (; t < n; ++t) sum += (s[t] = exp_scalar(s[t] - max_score));
    return sum;
  }
  static void weighted_sum(const float* p, const float* values, NextRows next, int n, int d,
                           float* acc) {
    int i = 0;
    for (; i + 32 <= d; i += 32) {  // 32 columns in four registers across all n positions
      __m256 o0 = _mm256_loadu_ps(acc + i), o1 = _mm256_loadu_ps(acc + i + 8),
             o2 = _mm256_loadu_ps(acc + i + 16), o3 = _mm256_loadu_ps(acc + i + 24);
      for (int t = 0; t < n; ++t) {
        if (i == 0) prefetch_rows(next, t, 1, d);  // during the first sweep over the rows
        const __m256 pt = _mm256_set1_ps(p[t]);
        const float* v = values + static_cast<std::size_t>(t) * d + i;
        o0 = _mm256_fmadd_ps(pt, _mm256_loadu_ps(v), o0);
        o1 = _mm256_fmadd_ps(pt, _mm256_loadu_ps(v + 8), o1);
        o2 = _mm256_fmadd_ps(pt, _mm256_loadu_ps(v + 16), o2);
        o3 = _mm256_fmadd_ps(pt, _mm256_loadu_ps(v + 24), o3);
      }
      _mm256_storeu_ps(acc + i, o0);
      _mm256_storeu_ps(acc + i + 8, o1);
      _mm256_storeu_ps(acc + i + 16, o2);
      _mm256_storeu_ps(acc + i + 24, o3);
    }
    if (i == 0) prefetch_rows(next, 0, n, d);  // head_dim < 32: no sweep to spread them over
    for (; i + 8 <= d; i += 8) {
      __m256 o = _mm256_loadu_ps(acc + i);
      for (int t = 0; t < n; ++t)
        o = _mm256_fmadd_ps(_mm256_set1_ps(p[t]),
                            _mm256_loadu_ps(values + static_cast<std::size_t>(t) * d + i), o);
      _mm256_storeu_ps(acc + i, o);
    }
    for (; i < d; ++i)
      for (int t = 0; t < n; ++t)
        acc[i] = std::fma(p[t], values[static_cast<std::size_t>(t) * d + i], acc[i]);
  }
};
#endif

#ifdef BOOK_KV_AVX512
// The AVX2 passes at twice the width; head_dim's remainder (head_dim mod 16) goes through masked
// loads and stores instead of scalar tails, so any head_dim stays in registers.
struct Avx512 {
  BOOK_KV_TARGET_AVX512 static __m512 exp(__m512 x) {
    x = _mm512_max_ps(x, _mm512_set1_ps(kExpLow));
    const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(kLog2e)),
                                          _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2Hi), x);
    r = _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2Lo), r);
    __m512 p = _mm512_fmadd_ps(_mm512_set1_ps(kP0), r, _mm512_set1_ps(kP1));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kP2));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kP3));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kP4));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kP5));
    p = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
    return _mm512_scalef_ps(p, n);  // p · 2^n in one instruction, exact like the exponent trick
  }
  // Reductions by halving: a fixed tree, written out so the order is on the page.
  BOOK_KV_TARGET_AVX512 static float sum(__m512 v) {
    v = _mm512_add_ps(v, _mm512_shuffle_f32x4(v, v, _MM_SHUFFLE(1, 0, 3, 2)));
    v = _mm512_add_ps(v, _mm512_shuffle_f32x4(v, v, _MM_SHUFFLE(2, 3, 0, 1)));
    __m128 s = _mm512_castps512_ps128(v);
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    return _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));
  }
  BOOK_KV_TARGET_AVX512 static float max(__m512 v) {
    v = _mm512_max_ps(v, _mm512_shuffle_f32x4(v, v, _MM_SHUFFLE(1, 0, 3, 2)));
    v = _mm512_max_ps(v, _mm512_shuffle_f32x4(v, v, _MM_SHUFFLE(2, 3, 0, 1)));
    __m128 s = _mm512_castps512_ps128(v);
    s = _mm_max_ps(s, _mm_movehl_ps(s, s));
    return _mm_cvtss_f32(_mm_max_ss(s, _mm_movehdup_ps(s)));
  }
  BOOK_KV_TARGET_AVX512 static __mmask16 tail_mask(int lanes) {
    return static_cast<__mmask16>((1u << lanes) - 1u);
  }
  // q·k: full registers, then the masked remainder, then one fixed reduction tree.
  BOOK_KV_TARGET_AVX512 static __m512 dot_lanes(const float* q, const float* k, int d) {
    __m512 acc = _mm512_setzero_ps();
    int i = 0;
    for (; i + 16 <= d; i += 16)
      acc = _mm512_fmadd_ps(_mm512_loadu_ps(q + i), _mm512_loadu_ps(k + i), acc);
    if (i < d) {
      const __mmask16 m = tail_mask(d - i);
      acc = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, q + i), _mm512_maskz_loadu_ps(m, k + i), acc);
    }
    return acc;
  }
  BOOK_KV_TARGET_AVX512 static void scores(const float* q, const float* keys, NextRows next, int n,
                                           int d, float scale, float* s) {
    int t = 0;
    const int full = d - d % 16;
    const __mmask16 m = tail_mask(d % 16);
    for (; t + 4 <= n; t += 4) {  // four positions in flight, each exactly as dot_lanes sums it
      prefetch_rows(next, t, 4, d);
      const float* k = keys + static_cast<std::size_t>(t) * d;
      __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
      for (int i = 0; i < full; i += 16) {
        const __m512 qi = _mm512_loadu_ps(q + i);
        a0 = _mm512_fmadd_ps(qi, _mm512_loadu_ps(k + i), a0);
        a1 = _mm512_fmadd_ps(qi, _mm512_loadu_ps(k + d + i), a1);
        a2 = _mm512_fmadd_ps(qi, _mm512_loadu_ps(k + 2 * d + i), a2);
        a3 = _mm512_fmadd_ps(qi, _mm512_loadu_ps(k + 3 * d + i), a3);
      }
      if (full < d) {
        const __m512 qi = _mm512_maskz_loadu_ps(m, q + full);
        a0 = _mm512_fmadd_ps(qi, _mm512_maskz_loadu_ps(m, k + full), a0);
        a1 = _mm512_fmadd_ps(qi, _mm512_maskz_loadu_ps(m, k + d + full), a1);
        a2 = _mm512_fmadd_ps(qi, _mm512_maskz_loadu_ps(m, k + 2 * d + full), a2);
        a3 = _mm512_fmadd_ps(qi, _mm512_maskz_loadu_ps(m, k + 3 * d + full), a3);
      }
      s[t] = sum(a0) * scale;
      s[t + 1] = sum(a1) * scale;
      s[t + 2] = sum(a2) * scale;
      s[t + 3] = sum(a3) * scale;
    }
    for (; t < n; ++t) s[t] = sum(dot_lanes(q, keys + static_cast<std::size_t>(t) * d, d)) * scale;
  }
  BOOK_KV_TARGET_AVX512 static float softmax(float* s, int n) {
    const int full = n - n % 16;
    const __mmask16 m = tail_mask(n % 16);
    const float lowest = -std::numeric_limits<float>::infinity();
    __m512 top = _mm512_set1_ps(lowest);  // max is exact: any order gives the same bits
    for (int t = 0; t < full; t += 16) top = _mm512_max_ps(top, _mm512_loadu_ps(s + t));
    if (full < n)
      top = _mm512_max_ps(top, _mm512_mask_loadu_ps(_mm512_set1_ps(lowest), m, s + full));
    const __m512 max_score = _mm512_set1_ps(max(top));
    __m512 acc = _mm512_setzero_ps();
    for (int t = 0; t < full; t += 16) {
      const __m512 p = exp(_mm512_sub_ps(_mm512_loadu_ps(s + t), max_score));
      _mm512_storeu_ps(s + t, p);
      acc = _mm512_add_ps(acc, p);
    }
    if (full < n) {
      const __m512 p = exp(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, s + full), max_score));
      _mm512_mask_storeu_ps(s + full, m, p);
      acc = _mm512_mask_add_ps(acc, m, acc, p);
    }
    return sum(acc);
  }
  BOOK_KV_TARGET_AVX512 static void weighted_sum(const float* p, const float* values, NextRows next,
                                                 int n, int d, float* acc) {
    int i = 0;
    for (; i + 64 <= d; i += 64) {  // 64 columns in four registers across all n positions
      __m512 o0 = _mm512_loadu_ps(acc + i), o1 = _mm512_loadu_ps(acc + i + 16),
             o2 = _mm512_loadu_ps(acc + i + 32), o3 = _mm512_loadu_ps(acc + i + 48);
      for (int t = 0; t < n; ++t) {
        if (i == 0) prefetch_rows(next, t, 1, d);  // during the first sweep over the rows
        const __m512 pt = _mm512_set1_ps(p[t]);
        const float* v = values + static_cast<std::size_t>(t) * d + i;
        o0 = _mm512_fmadd_ps(pt, _mm512_loadu_ps(v), o0);
        o1 = _mm512_fmadd_ps(pt, _mm512_loadu_ps(v + 16), o1);
        o2 = _mm512_fmadd_ps(pt, _mm512_loadu_ps(v + 32), o2);
        o3 = _mm512_fmadd_ps(pt, _mm512_loadu_ps(v + 48), o3);
      }
      _mm512_storeu_ps(acc + i, o0);
      _mm512_storeu_ps(acc + i + 16, o1);
      _mm512_storeu_ps(acc + i + 32, o2);
      _mm512_storeu_ps(acc + i + 48, o3);
    }
    if (i == 0) prefetch_rows(next, 0, n, d);  // head_dim < 64: no sweep to spread them over
    for (; i < d; i += 16) {                   // 16 columns at a time, the last ones masked
      const __mmask16 m = tail_mask(std::min(16, d - i));
      __m512 o = _mm512_maskz_loadu_ps(m, acc + i);
      for (int t = 0; t < n; ++t)
        o = _mm512_fmadd_ps(_mm512_set1_ps(p[t]),
                            _mm512_maskz_loadu_ps(m, values + static_cast<std::size_t>(t) * d + i),
                            o);
      _mm512_mask_storeu_ps(acc + i, m, o);
    }
  }
};
#endif

//! [fast_kernel]
// Heads [h0, h1) of one query: the three passes, tile by tile (at most kTile positions, never
// across a block boundary) through the table, every head of a tile before the next tile. A block
// holds its heads side by side ([head][slot][head_dim]), so on the paged cache a tile of a whole
// block is one run of (h1 − h0) · B · d floats. `scratch` holds (h1 − h0) · (context_len + 1)
// floats. Each head's sums run in the one-head order, whatever the tiles.
template <class Path>
void attend(const LayerKvView& kv, const AttentionQuery& query, int h0, int h1, float* scratch) {
  const int d = kv.head_dim, bs = kv.block_size, n = query.context_len;
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  const auto table = query.block_table;
  const auto scores = [&](int h) { return scratch + static_cast<std::size_t>(h - h0) * n; };
  // Position p's row of head h in `pool`, and the tile that starts at p.
  const auto row = [&](const float* pool, int p, int h) {
    return pool + kv.offset(table[p / bs], h, p % bs);
  };
  const auto tile = [&](int p) { return std::min({kTile, bs - p % bs, n - p}); };
  const auto next = [&](const float* pool, int p, int h) {
    return p < n ? NextRows{row(pool, p, h), tile(p)} : NextRows{};
  };
  for (int p = 0; p < n; p += tile(p))
    for (int h = h0; h < h1; ++h)
      Path::scores(query.query + h * d, row(kv.keys, p, h), next(kv.keys, p + tile(p), h), tile(p),
                   d, scale, scores(h) + p);
  float* inverse_sums = scratch + static_cast<std::size_t>(h1 - h0) * n;
  for (int h = h0; h < h1; ++h) inverse_sums[h - h0] = 1.0f / Path::softmax(scores(h), n);
  std::fill(query.out + h0 * d, query.out + h1 * d, 0.0f);
  for (int p = 0; p < n; p += tile(p))
    for (int h = h0; h < h1; ++h)
      Path::weighted_sum(scores(h) + p, row(kv.values, p, h), next(kv.values, p + tile(p), h),
                         tile(p), d, query.out + h * d);
  for (int h = h0; h < h1; ++h)
    for (int i = 0; i < d; ++i) query.out[h * d + i] *= inverse_sums[h - h0];
}
//! [fast_kernel]

}  // namespace

const char* kernel_path_name(KernelPath path) {
  switch (path) {
    case KernelPath::kAvx512:
      return "AVX-512";
    case KernelPath::kAvx2:
      return "AVX2 + FMA";
    case KernelPath::kPlain:
      break;
  }
  return "plain loops";
}

bool kernel_path_available(KernelPath path) {
  switch (path) {
    case KernelPath::kAvx512:
#ifdef BOOK_KV_AVX512
      return cpu_isa() >= Isa::kAvx512;
#else
      return false;
#endif
    case KernelPath::kAvx2:
#ifdef BOOK_KV_AVX2
      return true;
#else
      return false;
#endif
    case KernelPath::kPlain:
      return true;
  }
  return false;
}

KernelPath best_kernel_path() {
  for (KernelPath path : {KernelPath::kAvx512, KernelPath::kAvx2})
    if (kernel_path_available(path)) return path;
  return KernelPath::kPlain;
}

CpuPagedAttention::CpuPagedAttention(int threads, KernelPath path)
    : team_(threads), path_(path), attend_(attend<Plain>), scores_(threads) {
  BOOK_CHECK(kernel_path_available(path),
             "CpuPagedAttention: the " << kernel_path_name(path)
                                       << " path cannot run here (this build or this CPU lacks "
                                          "it); pass best_kernel_path(), which is "
                                       << kernel_path_name(best_kernel_path()));
#ifdef BOOK_KV_AVX512
  if (path == KernelPath::kAvx512) attend_ = attend<Avx512>;
#endif
#ifdef BOOK_KV_AVX2
  if (path == KernelPath::kAvx2) attend_ = attend<Avx2>;
#endif
}

void CpuPagedAttention::run(const LayerKvView& kv, std::span<const AttentionQuery> queries) {
  check_attention_args("CpuPagedAttention::run", kv, queries);
  int longest = 0;
  for (const auto& q : queries) longest = std::max(longest, q.context_len);
  const std::size_t scratch = static_cast<std::size_t>(kv.n_head) * (longest + 1);
  for (auto& s : scores_)
    if (s.size() < scratch) s.resize(scratch);
  for_query_heads(team_, queries.size(), kv.n_head,
                  [&](int member, std::size_t query, int h0, int h1) {
                    attend_(kv, queries[query], h0, h1, scores_[member].data());
                  });
}

}  // namespace book::kv
