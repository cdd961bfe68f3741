// The INT8 paged attention: chapter 10's kernel with its keys and values read as bytes. Why the
// vector paths are faster than the plain loop: the bytes are widened to float a register at a
// time (8 or 16), four positions' dot products are in flight at once, and a tile's weighted sum
// keeps its output columns in registers across the positions.
#include "chapters/14_quantization/kv_int8_attention.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>

#include "common/check.h"

#if defined(__AVX2__) && defined(__FMA__)
#define BOOK_KV8_AVX2 1
#endif
// As in chapter 10's attention_cpu.cc: AVX-512 per function (target attribute), chosen at run
// time, never for the whole file.
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define BOOK_KV8_AVX512 1
#define BOOK_KV8_TARGET_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl")))
#endif
#if defined(BOOK_KV8_AVX2) || defined(BOOK_KV8_AVX512)
// GCC 12's AVX-512 intrinsics warn about their own self-initialised variables (GCC bug 105593).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#endif

namespace book::quant {

void check_int8_attention_args(const char* who, const kv::LayerKvInt8View& kv,
                               std::span<const kv::AttentionQuery> queries) {
  BOOK_CHECK(kv.keys != nullptr && kv.values != nullptr && kv.key_scales != nullptr &&
                 kv.value_scales != nullptr,
             who << ": the INT8 view has no keys, values or scales (null pointer)");
  // The sizes and the queries are checked as chapter 10 checks an FP32 view: a view with the
  // same sizes (its pointers are never read).
  const kv::LayerKvView sizes{reinterpret_cast<const float*>(kv.keys),
                              reinterpret_cast<const float*>(kv.values),
                              kv.num_blocks,
                              kv.block_size,
                              kv.n_head,
                              kv.head_dim};
  kv::check_attention_args(who, sizes, queries);
  for (int h = 0; h < kv.n_head; ++h)
    BOOK_CHECK(std::isfinite(kv.key_scales[h]) && kv.key_scales[h] > 0 &&
                   std::isfinite(kv.value_scales[h]) && kv.value_scales[h] > 0,
               who << ": head " << h << "'s scales are " << kv.key_scales[h] << " (keys) and "
                   << kv.value_scales[h] << " (values); each must be finite and > 0");
}

//! [int8_plain]
void paged_attention_int8_plain(const kv::LayerKvInt8View& kv,
                                std::span<const kv::AttentionQuery> queries) {
  check_int8_attention_args("paged_attention_int8_plain", kv, queries);
  const int d = kv.head_dim, bs = kv.block_size;
  std::vector<float> p;
  for (const kv::AttentionQuery& query : queries) {
    p.resize(query.context_len);
    for (int h = 0; h < kv.n_head; ++h) {
      const float* q = query.query + h * d;
      const float key_factor = kv.key_scales[h] / std::sqrt(static_cast<float>(d));
      float max_score = -std::numeric_limits<float>::infinity();
      for (int t = 0; t < query.context_len; ++t) {  // position t: block t / B, slot t mod B
        const std::int8_t* k = kv.keys + kv.offset(query.block_table[t / bs], h, t % bs);
        float dot = 0;
        for (int i = 0; i < d; ++i) dot += q[i] * static_cast<float>(k[i]);
        p[t] = dot * key_factor;
        max_score = std::max(max_score, p[t]);
      }
      float sum = 0;
      for (int t = 0; t < query.context_len; ++t) sum += (p[t] = std::exp(p[t] - max_score));
      float* out = query.out + h * d;
      std::fill(out, out + d, 0.0f);
      for (int t = 0; t < query.context_len; ++t) {
        const std::int8_t* v = kv.values + kv.offset(query.block_table[t / bs], h, t % bs);
        for (int i = 0; i < d; ++i) out[i] += p[t] * static_cast<float>(v[i]);
      }
      const float value_factor = kv.value_scales[h] / sum;  // the scale and the softmax's division
      for (int i = 0; i < d; ++i) out[i] *= value_factor;
    }
  }
}
//! [int8_plain]

namespace {

// Each path has the same two passes over one run of n consecutive positions of one head (d
// numbers each, a block's slots):
//   scores(q, keys, n, d, s): s[t] = q · k_t (q already scaled by s_K / √d);
//   weighted_sum(p, values, n, d, acc): acc[0, d) += Σ_t p[t] · v_t.
struct Plain {
  static void scores(const float* q, const std::int8_t* keys, int n, int d, float* s) {
    for (int t = 0; t < n; ++t) {
      float sum = 0;
      for (int i = 0; i < d; ++i) sum = std::fma(q[i], keys[std::size_t(t) * d + i], sum);
      s[t] = sum;
    }
  }
  static void weighted_sum(const float* p, const std::int8_t* values, int n, int d, float* acc) {
    for (int i = 0; i < d; ++i)
      for (int t = 0; t < n; ++t) acc[i] = std::fma(p[t], values[std::size_t(t) * d + i], acc[i]);
  }
};

#ifdef BOOK_KV8_AVX2
struct Avx2 {
  // 8 bytes → 8 floats: sign-extend to 32 bits, convert.
  static __m256 widen(const std::int8_t* x) {
    return _mm256_cvtepi32_ps(
        _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(x))));
  }
  static float horizontal_sum(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    return _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));
  }
  static float dot(const float* q, const std::int8_t* k, int d) {
    int i = 0;
    __m256 acc = _mm256_setzero_ps();
    for (; i + 8 <= d; i += 8) acc = _mm256_fmadd_ps(_mm256_loadu_ps(q + i), widen(k + i), acc);
    float sum = horizontal_sum(acc);
    for (; i < d; ++i) sum = std::fma(q[i], k[i], sum);
    return sum;
  }
  static void scores(const float* q, const std::int8_t* keys, int n, int d, float* s) {
    int t = 0;
    if (d % 8 == 0)  // four positions in flight: four independent FMA chains
      for (; t + 4 <= n; t += 4) {
        const std::int8_t* k = keys + std::size_t(t) * d;
        __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
        for (int i = 0; i < d; i += 8) {
          const __m256 qi = _mm256_loadu_ps(q + i);
          a0 = _mm256_fmadd_ps(qi, widen(k + i), a0);
          a1 = _mm256_fmadd_ps(qi, widen(k + d + i), a1);
          a2 = _mm256_fmadd_ps(qi, widen(k + 2 * d + i), a2);
          a3 = _mm256_fmadd_ps(qi, widen(k + 3 * d + i), a3);
        }
        s[t] = horizontal_sum(a0);
        s[t + 1] = horizontal_sum(a1);
        s[t + 2] = horizontal_sum(a2);
        s[t + 3] = horizontal_sum(a3);
      }
    for (; t < n; ++t) s[t] = dot(q, keys + std::size_t(t) * d, d);
  }
  static void weighted_sum(const float* p, const std::int8_t* values, int n, int d, float* acc) {
    int i = 0;
    for (; i + 16 <= d; i += 16) {  // 16 columns in two registers across all n positions
      __m256 o0 = _mm256_loadu_ps(acc + i), o1 = _mm256_loadu_ps(acc + i + 8);
      for (int t = 0; t < n; ++t) {
        const __m256 pt = _mm256_set1_ps(p[t]);
        const std::int8_t* v = values + std::size_t(t) * d + i;
        o0 = _mm256_fmadd_ps(pt, widen(v), o0);
        o1 = _mm256_fmadd_ps(pt, widen(v + 8), o1);
      }
      _mm256_storeu_ps(acc + i, o0);
      _mm256_storeu_ps(acc + i + 8, o1);
    }
    for (; i + 8 <= d; i += 8) {
      __m256 o = _mm256_loadu_ps(acc + i);
      for (int t = 0; t < n; ++t)
        o = _mm256_fmadd_ps(_mm256_set1_ps(p[t]), widen(values + std::size_t(t) * d + i), o);
      _mm256_storeu_ps(acc + i, o);
    }
    for (; i < d; ++i)
      for (int t = 0; t < n; ++t) acc[i] = std::fma(p[t], values[std::size_t(t) * d + i], acc[i]);
  }
};
#endif

#ifdef BOOK_KV8_AVX512
// 16 numbers a register; head_dim's remainder through masked loads and stores.
struct Avx512 {
  BOOK_KV8_TARGET_AVX512 static __mmask16 tail_mask(int count) {
    return static_cast<__mmask16>((1u << count) - 1u);
  }
  BOOK_KV8_TARGET_AVX512 static __m512 widen(const std::int8_t* x, __mmask16 m) {
    return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(m, x)));
  }
  BOOK_KV8_TARGET_AVX512 static void scores(const float* q, const std::int8_t* keys, int n, int d,
                                            float* s) {
    int t = 0;
    for (; t + 4 <= n; t += 4) {  // four positions in flight
      const std::int8_t* k = keys + std::size_t(t) * d;
      __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
      for (int i = 0; i < d; i += 16) {
        const __mmask16 m = tail_mask(std::min(16, d - i));
        const __m512 qi = _mm512_maskz_loadu_ps(m, q + i);
        a0 = _mm512_fmadd_ps(qi, widen(k + i, m), a0);
        a1 = _mm512_fmadd_ps(qi, widen(k + d + i, m), a1);
        a2 = _mm512_fmadd_ps(qi, widen(k + 2 * d + i, m), a2);
        a3 = _mm512_fmadd_ps(qi, widen(k + 3 * d + i, m), a3);
      }
      s[t] = _mm512_reduce_add_ps(a0);
      s[t + 1] = _mm512_reduce_add_ps(a1);
      s[t + 2] = _mm512_reduce_add_ps(a2);
      s[t + 3] = _mm512_reduce_add_ps(a3);
    }
    for (; t < n; ++t) {
      const std::int8_t* k = keys + std::size_t(t) * d;
      __m512 a = _mm512_setzero_ps();
      for (int i = 0; i < d; i += 16) {
        const __mmask16 m = tail_mask(std::min(16, d - i));
        a = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, q + i), widen(k + i, m), a);
      }
      s[t] = _mm512_reduce_add_ps(a);
    }
  }
  BOOK_KV8_TARGET_AVX512 static void weighted_sum(const float* p, const std::int8_t* values, int n,
                                                  int d, float* acc) {
    for (int i = 0; i < d; i += 32) {  // 32 columns in two registers, the last ones masked
      const __mmask16 m0 = tail_mask(std::min(16, d - i));
      const __mmask16 m1 = tail_mask(std::clamp(d - i - 16, 0, 16));
      __m512 o0 = _mm512_maskz_loadu_ps(m0, acc + i), o1 = _mm512_maskz_loadu_ps(m1, acc + i + 16);
      for (int t = 0; t < n; ++t) {
        const __m512 pt = _mm512_set1_ps(p[t]);
        const std::int8_t* v = values + std::size_t(t) * d + i;
        o0 = _mm512_fmadd_ps(pt, widen(v, m0), o0);
        if (m1) o1 = _mm512_fmadd_ps(pt, widen(v + 16, m1), o1);
      }
      _mm512_mask_storeu_ps(acc + i, m0, o0);
      _mm512_mask_storeu_ps(acc + i + 16, m1, o1);
    }
  }
};
#endif

// Heads [h0, h1) of one query, each as paged_attention_int8_plain defines it, run by run (a run
// never crosses a block boundary). `scratch` holds context_len + head_dim floats.
template <class Path>
void attend(const kv::LayerKvInt8View& kv, const kv::AttentionQuery& query, int h0, int h1,
            float* scratch) {
  const int d = kv.head_dim, bs = kv.block_size, n = query.context_len;
  const auto table = query.block_table;
  float* scores = scratch;
  float* q = scratch + n;
  for (int h = h0; h < h1; ++h) {
    const float key_factor = kv.key_scales[h] / std::sqrt(static_cast<float>(d));
    for (int i = 0; i < d; ++i) q[i] = query.query[h * d + i] * key_factor;
    for (int p = 0; p < n;) {
      const int run = std::min(bs - p % bs, n - p);
      Path::scores(q, kv.keys + kv.offset(table[p / bs], h, p % bs), run, d, scores + p);
      p += run;
    }
    const float max_score = *std::max_element(scores, scores + n);
    float sum = 0;
    for (int t = 0; t < n; ++t) sum += (scores[t] = std::exp(scores[t] - max_score));
    float* out = query.out + h * d;
    std::fill(out, out + d, 0.0f);
    for (int p = 0; p < n;) {
      const int run = std::min(bs - p % bs, n - p);
      Path::weighted_sum(scores + p, kv.values + kv.offset(table[p / bs], h, p % bs), run, d, out);
      p += run;
    }
    const float value_factor = kv.value_scales[h] / sum;
    for (int i = 0; i < d; ++i) out[i] *= value_factor;
  }
}

}  // namespace

Int8PagedAttention::Int8PagedAttention(int threads, kv::KernelPath path)
    : team_(threads), path_(path), attend_(attend<Plain>), scratch_(threads) {
  BOOK_CHECK(kv::kernel_path_available(path),
             "Int8PagedAttention: the " << kv::kernel_path_name(path)
                                        << " path cannot run here (this build or this CPU lacks "
                                           "it); pass kv::best_kernel_path(), which is "
                                        << kv::kernel_path_name(kv::best_kernel_path()));
#ifdef BOOK_KV8_AVX512
  if (path == kv::KernelPath::kAvx512) attend_ = attend<Avx512>;
#endif
#ifdef BOOK_KV8_AVX2
  if (path == kv::KernelPath::kAvx2) attend_ = attend<Avx2>;
#endif
}

void Int8PagedAttention::run(const kv::LayerKvInt8View& kv,
                             std::span<const kv::AttentionQuery> queries) {
  check_int8_attention_args("Int8PagedAttention::run", kv, queries);
  int longest = 0;
  for (const auto& q : queries) longest = std::max(longest, q.context_len);
  for (auto& s : scratch_)
    if (s.size() < static_cast<std::size_t>(longest + kv.head_dim)) s.resize(longest + kv.head_dim);
  kv::for_query_heads(team_, queries.size(), kv.n_head,
                  [&](int member, std::size_t query, int h0, int h1) {
                    attend_(kv, queries[query], h0, h1, scratch_[member].data());
                  });
}

void use_int8_attention(kv::ModelRunner& runner, int threads) {
  BOOK_CHECK(runner.cache().precision() == kv::KvPrecision::kInt8,
             "use_int8_attention: the runner's cache is "
                 << kv::kv_precision_name(runner.cache().precision())
                 << ", not int8; chapter 10's own kernels serve it");
  BOOK_CHECK(threads >= 1, "use_int8_attention: threads must be >= 1, got " << threads);
  // The kernel lives as long as the runner keeps the function (shared: std::function copies).
  auto kernel = std::make_shared<Int8PagedAttention>(threads);
  runner.use_attention([kernel](const kv::PagedKvCache& cache, int layer,
                                std::span<const kv::AttentionQuery> queries) {
    kernel->run(cache.layer_int8(layer), queries);
  });
}

}  // namespace book::quant
