// Tiled causal attention's backward (Dao et al. 2022, Algorithm 2) in chapter 4's layout, and the
// shape checks; the forward is exercise mem.flash_attention_forward (solutions/ or exercises/).
#include "chapters/09_memory_accounting/flash_attention.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "common/check.h"

namespace book::mem {
void FlashShape::check() const {
  BOOK_CHECK(batch >= 1, "flash attention: batch must be >= 1, got " << batch);
  BOOK_CHECK(seq_len >= 1, "flash attention: seq_len must be >= 1, got " << seq_len);
  BOOK_CHECK(n_head >= 1, "flash attention: n_head must be >= 1, got " << n_head);
  BOOK_CHECK(head_size >= 1, "flash attention: head_size must be >= 1, got " << head_size);
  BOOK_CHECK(tile >= 1, "flash attention: tile must be >= 1 (rows per tile), got " << tile);
}

std::size_t FlashShape::rows() const { return static_cast<std::size_t>(batch) * n_head * seq_len; }

std::size_t flash_forward_scratch_bytes(const FlashShape& s, std::size_t element_bytes) {
  const std::size_t tile = static_cast<std::size_t>(s.tile);
  return (tile * tile + 2 * tile + tile * s.head_size) * element_bytes;
}

std::size_t flash_backward_scratch_bytes(const FlashShape& s, std::size_t element_bytes) {
  const std::size_t tile = static_cast<std::size_t>(s.tile);
  return (s.rows() + 2 * tile * tile) * element_bytes;
}

//! [flash_backward]
template <typename T>
void flash_attention_backward(const T* dout, const T* qkv, const T* out, const T* lse,
                              const FlashShape& s, T* dqkv, MemoryTracker* tracker) {
  s.check();
  const int D = s.head_size, tile = s.tile;
  const T scale = T(1) / std::sqrt(T(D));
  const std::size_t tt = static_cast<std::size_t>(tile);
  std::fill(dqkv, dqkv + static_cast<std::size_t>(s.batch) * s.seq_len * s.qkv_row(), T(0));
  // delta_i = rowsum(dO_i ∘ O_i) = Σ_j P_ij dP_ij: the softmax Jacobian's subtracted term.
  TrackedBuffer<T> delta(s.rows(), MemoryCategory::kOther, tracker);
  TrackedBuffer<T> probs(tt * tt, MemoryCategory::kOther, tracker);   // P tile, recomputed
  TrackedBuffer<T> dprobs(tt * tt, MemoryCategory::kOther, tracker);  // dP tile
  for (int b = 0; b < s.batch; ++b)
    for (int h = 0; h < s.n_head; ++h)
      for (int i = 0; i < s.seq_len; ++i) {
        const T* o = out + s.token(b, i) * s.width() + h * D;
        const T* d_o = dout + s.token(b, i) * s.width() + h * D;
        T sum = 0;
        for (int d = 0; d < D; ++d) sum += d_o[d] * o[d];
        delta[(static_cast<std::size_t>(b) * s.n_head + h) * s.seq_len + i] = sum;
      }
  for (int b = 0; b < s.batch; ++b)
    for (int h = 0; h < s.n_head; ++h) {
      const std::size_t head_rows = (static_cast<std::size_t>(b) * s.n_head + h) * s.seq_len;
      for (int j0 = 0; j0 < s.seq_len; j0 += tile) {  // outer loop over K/V tiles, as Algorithm 2
        const int j1 = std::min(j0 + tile, s.seq_len);
        for (int i0 = j0; i0 < s.seq_len; i0 += tile) {  // query tiles at or below the diagonal
          const int i1 = std::min(i0 + tile, s.seq_len);
          // P_ij = exp(S_ij − lse_i) and dP_ij = dO_i · V_j, zero above the diagonal.
          for (int i = i0; i < i1; ++i) {
            const T* q = qkv + s.token(b, i) * s.qkv_row() + h * D;
            const T* d_o = dout + s.token(b, i) * s.width() + h * D;
            for (int j = j0; j < j1; ++j) {
              T& p = probs[(i - i0) * tt + (j - j0)];
              T& dp = dprobs[(i - i0) * tt + (j - j0)];
              if (j > i) {
                p = dp = 0;
                continue;
              }
              const T* k = qkv + s.token(b, j) * s.qkv_row() + s.width() + h * D;
              const T* v = qkv + s.token(b, j) * s.qkv_row() + 2 * s.width() + h * D;
              T dot = 0, dov = 0;
              for (int d = 0; d < D; ++d) {
                dot += q[d] * k[d];
                dov += d_o[d] * v[d];
              }
              p = std::exp(dot * scale - lse[head_rows + i]);
              dp = dov;
            }
          }
          // dV_j += P^T dO;  dS = P ∘ (dP − delta);  dQ_i += dS K / √D;  dK_j += dS^T Q / √D.
          for (int i = i0; i < i1; ++i) {
            const std::size_t qi = s.token(b, i) * s.qkv_row() + h * D;
            const T* d_o = dout + s.token(b, i) * s.width() + h * D;
            for (int j = j0; j < std::min(j1, i + 1); ++j) {
              const std::size_t kj = s.token(b, j) * s.qkv_row() + h * D;
              const T p = probs[(i - i0) * tt + (j - j0)];
              const T ds = p * (dprobs[(i - i0) * tt + (j - j0)] - delta[head_rows + i]) * scale;
              for (int d = 0; d < D; ++d) {
                dqkv[kj + 2 * s.width() + d] += p * d_o[d];
                dqkv[qi + d] += ds * qkv[kj + s.width() + d];
                dqkv[kj + s.width() + d] += ds * qkv[qi + d];
              }
            }
          }
        }
      }
    }
}
//! [flash_backward]

template void flash_attention_backward<float>(const float*, const float*, const float*,
                                              const float*, const FlashShape&, float*,
                                              MemoryTracker*);
template void flash_attention_backward<double>(const double*, const double*, const double*,
                                               const double*, const FlashShape&, double*,
                                               MemoryTracker*);

}  // namespace book::mem
