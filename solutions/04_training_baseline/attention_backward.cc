// Exercise train.attention_backward, the reference solution.
#include <algorithm>
#include <cmath>
#include <vector>

#include "chapters/04_training_baseline/layers.h"

namespace book::train {

// For one head and one query position t, the forward was
//   score_s = q_t · k_s / √d,  p = softmax(score) over s ≤ t,  o_t = Σ_s p_s v_s.
// Backward, in reverse order:
//   dp_s = do_t · v_s                     dv_s += p_s · do_t
//   dscore_s = p_s (dp_s - Σ_j p_j dp_j)  (the softmax Jacobian, applied without forming it)
//   dq_t += Σ_s dscore_s k_s / √d         dk_s += dscore_s q_t / √d
template <typename T>
void attention_backward(const T* dout, const T* qkv, const T* att, int batch, int seq_len,
                        int n_head, int head_size, T* dqkv) {
  const int width = n_head * head_size, row = 3 * width;
  const T scale = T(1) / std::sqrt(T(head_size));
  std::fill(dqkv, dqkv + static_cast<std::size_t>(batch) * seq_len * row, T(0));
  std::vector<T> dp(seq_len);
  for (int b = 0; b < batch; ++b)
    for (int h = 0; h < n_head; ++h)
      for (int t = 0; t < seq_len; ++t) {
        const std::size_t q_row = (static_cast<std::size_t>(b) * seq_len + t) * row;
        const T* p = att + ((static_cast<std::size_t>(b) * n_head + h) * seq_len + t) * seq_len;
        const T* d_o = dout + (static_cast<std::size_t>(b) * seq_len + t) * width + h * head_size;
        T weighted = 0;
        for (int s = 0; s <= t; ++s) {
          const std::size_t s_row = (static_cast<std::size_t>(b) * seq_len + s) * row;
          const T* v = qkv + s_row + 2 * width + h * head_size;
          T* dv = dqkv + s_row + 2 * width + h * head_size;
          T dot = 0;
          for (int d = 0; d < head_size; ++d) {
            dot += d_o[d] * v[d];
            dv[d] += p[s] * d_o[d];
          }
          dp[s] = dot;
          weighted += p[s] * dot;
        }
        const T* q = qkv + q_row + h * head_size;
        T* dq = dqkv + q_row + h * head_size;
        for (int s = 0; s <= t; ++s) {
          const std::size_t s_row = (static_cast<std::size_t>(b) * seq_len + s) * row;
          const T dscore = p[s] * (dp[s] - weighted) * scale;
          const T* k = qkv + s_row + width + h * head_size;
          T* dk = dqkv + s_row + width + h * head_size;
          for (int d = 0; d < head_size; ++d) {
            dq[d] += dscore * k[d];
            dk[d] += dscore * q[d];
          }
        }
      }
}

template void attention_backward<float>(const float*, const float*, const float*, int, int, int,
                                        int, float*);
template void attention_backward<double>(const double*, const double*, const double*, int, int, int,
                                         int, double*);

}  // namespace book::train
