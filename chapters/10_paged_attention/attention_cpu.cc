// The fast CPU paged attention. Why it is faster than the reference: AVX2 FMAs over head_dim with
// four positions in flight (four independent dependency chains), a vector exp over the contiguous
// scores instead of libm's scalar one (which would cost more than the dot products), one pass over
// each block's keys and one over its values, the division by the softmax sum done once per
// output element, and threads over (query, head) pairs.
#include "chapters/10_paged_attention/attention_cpu.h"

#include <algorithm>
#include <cmath>
#include <limits>

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define BOOK_KV_AVX2 1
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

#ifdef BOOK_KV_AVX2
__m256 exp_vector(__m256 x) {
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

float horizontal_sum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));
}
#endif

// q·k over d numbers. One accumulator per position, whatever the caller groups together, so
// the result of a position never depends on its neighbours.
float dot(const float* q, const float* k, int d) {
  int i = 0;
  float sum = 0;
#ifdef BOOK_KV_AVX2
  __m256 acc = _mm256_setzero_ps();
  for (; i + 8 <= d; i += 8)
    acc = _mm256_fmadd_ps(_mm256_loadu_ps(q + i), _mm256_loadu_ps(k + i), acc);
  sum = horizontal_sum(acc);
#endif
  for (; i < d; ++i) sum = std::fma(q[i], k[i], sum);
  return sum;
}

// Pass 1: scores[t] = q·K_t · scale for t in [0, n) of one block's keys (n rows of d numbers).
void block_scores(const float* q, const float* keys, int n, int d, float scale, float* scores) {
  int t = 0;
#ifdef BOOK_KV_AVX2
  if (d % 8 == 0) {  // four positions in flight: four independent FMA chains
    for (; t + 4 <= n; t += 4) {
      const float* k = keys + static_cast<std::size_t>(t) * d;
      __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
      for (int i = 0; i < d; i += 8) {
        const __m256 qi = _mm256_loadu_ps(q + i);
        a0 = _mm256_fmadd_ps(qi, _mm256_loadu_ps(k + i), a0);
        a1 = _mm256_fmadd_ps(qi, _mm256_loadu_ps(k + d + i), a1);
        a2 = _mm256_fmadd_ps(qi, _mm256_loadu_ps(k + 2 * d + i), a2);
        a3 = _mm256_fmadd_ps(qi, _mm256_loadu_ps(k + 3 * d + i), a3);
      }
      scores[t] = horizontal_sum(a0) * scale;
      scores[t + 1] = horizontal_sum(a1) * scale;
      scores[t + 2] = horizontal_sum(a2) * scale;
      scores[t + 3] = horizontal_sum(a3) * scale;
    }
  }
#endif
  for (; t < n; ++t) scores[t] = dot(q, keys + static_cast<std::size_t>(t) * d, d) * scale;
}

// Pass 2: p = exp(s − max) in place; returns Σ p. Over the contiguous scores: the order depends
// only on the context length.
float softmax_numerators(float* s, int n) {
  float max_score = -std::numeric_limits<float>::infinity();
  for (int t = 0; t < n; ++t) max_score = std::max(max_score, s[t]);
  int t = 0;
  float sum = 0;
#ifdef BOOK_KV_AVX2
  const __m256 m = _mm256_set1_ps(max_score);
  __m256 acc = _mm256_setzero_ps();
  for (; t + 8 <= n; t += 8) {
    const __m256 p = exp_vector(_mm256_sub_ps(_mm256_loadu_ps(s + t), m));
    _mm256_storeu_ps(s + t, p);
    acc = _mm256_add_ps(acc, p);
  }
  sum = horizontal_sum(acc);
#endif
  for (; t < n; ++t) sum += (s[t] = exp_scalar(s[t] - max_score));
  return sum;
}

// Pass 3: acc[0, d) += Σ_t p[t] · V_t over one block's n value rows. Each element is a chain of
// FMAs in position order, so block boundaries do not change it.
void block_weighted_sum(const float* p, const float* values, int n, int d, float* acc) {
  int i = 0;
#ifdef BOOK_KV_AVX2
  for (; i + 32 <= d; i += 32) {  // 32 columns in four registers across all n positions
    __m256 o0 = _mm256_loadu_ps(acc + i), o1 = _mm256_loadu_ps(acc + i + 8),
           o2 = _mm256_loadu_ps(acc + i + 16), o3 = _mm256_loadu_ps(acc + i + 24);
    for (int t = 0; t < n; ++t) {
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
  for (; i + 8 <= d; i += 8) {
    __m256 o = _mm256_loadu_ps(acc + i);
    for (int t = 0; t < n; ++t)
      o = _mm256_fmadd_ps(_mm256_set1_ps(p[t]),
                          _mm256_loadu_ps(values + static_cast<std::size_t>(t) * d + i), o);
    _mm256_storeu_ps(acc + i, o);
  }
#endif
  for (; i < d; ++i)
    for (int t = 0; t < n; ++t)
      acc[i] = std::fma(p[t], values[static_cast<std::size_t>(t) * d + i], acc[i]);
}

//! [fast_kernel]
// One head of one query: the three passes, block by block through the table.
void attend(const LayerKvView& kv, const AttentionQuery& query, int head, float* scores) {
  const int d = kv.head_dim, bs = kv.block_size, n = query.context_len;
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  const float* q = query.query + head * d;
  for (int start = 0, b = 0; start < n; start += bs, ++b)
    block_scores(q, kv.keys + kv.offset(query.block_table[b], head, 0), std::min(bs, n - start), d,
                 scale, scores + start);
  const float inverse_sum = 1.0f / softmax_numerators(scores, n);
  float* out = query.out + head * d;
  std::fill(out, out + d, 0.0f);
  for (int start = 0, b = 0; start < n; start += bs, ++b)
    block_weighted_sum(scores + start, kv.values + kv.offset(query.block_table[b], head, 0),
                       std::min(bs, n - start), d, out);
  for (int i = 0; i < d; ++i) out[i] *= inverse_sum;
}
//! [fast_kernel]

}  // namespace

CpuPagedAttention::CpuPagedAttention(int threads) : team_(threads), scores_(threads) {}

bool CpuPagedAttention::vectorised() {
#ifdef BOOK_KV_AVX2
  return true;
#else
  return false;
#endif
}

void CpuPagedAttention::run(const LayerKvView& kv, std::span<const AttentionQuery> queries) {
  check_attention_args("CpuPagedAttention::run", kv, queries);
  int longest = 0;
  for (const auto& q : queries) longest = std::max(longest, q.context_len);
  for (auto& s : scores_)
    if (static_cast<int>(s.size()) < longest) s.resize(longest);
  const long items = static_cast<long>(queries.size()) * kv.n_head;
  const int members = static_cast<int>(std::min<long>(team_.size(), std::max(1L, items)));
  team_.run([&](int member) {
    if (member >= members) return;
    // One contiguous range of (query, head) pairs per thread: neighbours share a query's blocks.
    const long begin = items * member / members, end = items * (member + 1) / members;
    for (long item = begin; item < end; ++item)
      attend(kv, queries[item / kv.n_head], static_cast<int>(item % kv.n_head),
             scores_[member].data());
  });
}

}  // namespace book::kv
