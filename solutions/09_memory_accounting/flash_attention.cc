// Exercise mem.flash_attention_forward, the reference solution: tiled causal attention with an
// online softmax (Dao et al. 2022, Algorithm 1) in chapter 4's layout.
#include <algorithm>
#include <cmath>
#include <limits>

#include "chapters/09_memory_accounting/flash_attention.h"

namespace book::mem {

//! [flash_forward]
template <typename T>
void flash_attention_forward(const T* qkv, const FlashShape& s, T* out, T* lse,
                             MemoryTracker* tracker) {
  s.check();
  const int D = s.head_size, tile = s.tile;
  const T scale = T(1) / std::sqrt(T(D));
  const std::size_t tt = static_cast<std::size_t>(tile);
  TrackedBuffer<T> scores(tt * tt, MemoryCategory::kOther, tracker);  // one tile of S, then P
  TrackedBuffer<T> row_max(tt, MemoryCategory::kOther, tracker);      // m_i, running
  TrackedBuffer<T> row_sum(tt, MemoryCategory::kOther, tracker);      // l_i, running
  TrackedBuffer<T> acc(tt * D, MemoryCategory::kOther, tracker);      // unnormalised output
  for (int b = 0; b < s.batch; ++b)
    for (int h = 0; h < s.n_head; ++h)
      for (int i0 = 0; i0 < s.seq_len; i0 += tile) {
        const int i1 = std::min(i0 + tile, s.seq_len);
        std::fill(row_max.data(), row_max.data() + tt, -std::numeric_limits<T>::infinity());
        std::fill(row_sum.data(), row_sum.data() + tt, T(0));
        std::fill(acc.data(), acc.data() + tt * D, T(0));
        // Causal: key tiles past the query tile's last row contribute nothing.
        for (int j0 = 0; j0 < i1; j0 += tile) {
          const int j1 = std::min(j0 + tile, s.seq_len);
          for (int i = i0; i < i1; ++i) {
            const T* q = qkv + s.token(b, i) * s.qkv_row() + h * D;
            T* srow = scores.data() + (i - i0) * tt;
            const int last = std::min(j1, i + 1);  // keys j <= i only
            T tile_max = -std::numeric_limits<T>::infinity();
            for (int j = j0; j < last; ++j) {
              const T* k = qkv + s.token(b, j) * s.qkv_row() + s.width() + h * D;
              T dot = 0;
              for (int d = 0; d < D; ++d) dot += q[d] * k[d];
              srow[j - j0] = dot * scale;
              tile_max = std::max(tile_max, srow[j - j0]);
            }
            if (last <= j0) continue;  // the whole tile is above the diagonal for this row
            // Online softmax: rescale what was summed under the old max to the new one.
            T& m = row_max[i - i0];
            const T m_new = std::max(m, tile_max);
            const T correction = std::exp(m - m_new);  // exp(-inf) = 0 on the first tile
            T* a = acc.data() + (i - i0) * D;
            for (int d = 0; d < D; ++d) a[d] *= correction;
            T sum = 0;
            for (int j = j0; j < last; ++j) {
              const T p = std::exp(srow[j - j0] - m_new);
              sum += p;
              const T* v = qkv + s.token(b, j) * s.qkv_row() + 2 * s.width() + h * D;
              for (int d = 0; d < D; ++d) a[d] += p * v[d];
            }
            row_sum[i - i0] = row_sum[i - i0] * correction + sum;
            m = m_new;
          }
        }
        for (int i = i0; i < i1; ++i) {
          const T l = row_sum[i - i0];
          T* o = out + s.token(b, i) * s.width() + h * D;
          const T* a = acc.data() + (i - i0) * D;
          for (int d = 0; d < D; ++d) o[d] = a[d] / l;
          lse[(static_cast<std::size_t>(b) * s.n_head + h) * s.seq_len + i] =
              row_max[i - i0] + std::log(l);
        }
      }
}
//! [flash_forward]

template void flash_attention_forward<float>(const float*, const FlashShape&, float*, float*,
                                             MemoryTracker*);
template void flash_attention_forward<double>(const double*, const FlashShape&, double*, double*,
                                              MemoryTracker*);

}  // namespace book::mem
