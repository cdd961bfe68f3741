// The reference kv.paged_attention: the textbook softmax(q·Kᵀ/√d)·V, one query and head at a
// time, with K and V found through the block table. Readable first; attention_cpu.cc is fast.
#include "chapters/10_paged_attention/paged_attention.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace book::kv {

//! [reference_kernel]
void paged_attention_reference(const LayerKvView& kv, std::span<const AttentionQuery> queries) {
  check_attention_args("paged_attention_reference", kv, queries);
  const int d = kv.head_dim, bs = kv.block_size;
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  std::vector<float> p;
  for (const AttentionQuery& query : queries) {
    p.resize(query.context_len);
    for (int h = 0; h < kv.n_head; ++h) {
      const float* q = query.query + h * d;
      float max_score = -std::numeric_limits<float>::infinity();
      for (int t = 0; t < query.context_len; ++t) {  // position t: block t / B, slot t mod B
        const float* k = kv.keys + kv.offset(query.block_table[t / bs], h, t % bs);
        float dot = 0;
        for (int i = 0; i < d; ++i) dot += q[i] * k[i];
        p[t] = dot * scale;
        max_score = std::max(max_score, p[t]);
      }
      float sum = 0;  // subtracting the maximum keeps exp() finite; the softmax is unchanged
      for (int t = 0; t < query.context_len; ++t) sum += (p[t] = std::exp(p[t] - max_score));
      float* out = query.out + h * d;
      std::fill(out, out + d, 0.0f);
      for (int t = 0; t < query.context_len; ++t) {
        const float* v = kv.values + kv.offset(query.block_table[t / bs], h, t % bs);
        for (int i = 0; i < d; ++i) out[i] += p[t] / sum * v[i];
      }
    }
  }
}
//! [reference_kernel]

}  // namespace book::kv
