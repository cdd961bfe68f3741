// Reference solution of tp.parallel_cross_entropy: the softmax cross-entropy of logits split by
// vocabulary columns, from three per-row reductions instead of the gathered logits.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "chapters/07_tensor_parallel/parallel_cross_entropy.h"
#include "common/check.h"

namespace book::tp {

//! [parallel_cross_entropy]
template <typename T>
T parallel_cross_entropy_forward(const T* logits, const int* targets, int rows, int vocab_local,
                                 int vocab_begin, T* probs, T* scratch,
                                 TensorParallelComm<T>& comm) {
  const std::size_t n = static_cast<std::size_t>(rows), t = static_cast<std::size_t>(comm.size());
  T* local_max = scratch;         // [rows]
  T* all_max = scratch + n;       // [t, rows]: every rank's row maxima
  T* sums = scratch + n + n * t;  // [2, rows]: Σ exp(z − max), then target logit − max
  // A target on no rank would add no logit and count as a loss of log Σ exp, silently.
  const std::int64_t vocab = static_cast<std::int64_t>(vocab_local) * comm.size();
  for (std::size_t i = 0; i < n; ++i)
    BOOK_CHECK(targets[i] >= -1 && targets[i] < vocab,
               "parallel_cross_entropy_forward: row " << i << "'s target is " << targets[i]
                                                      << ": give an id of the " << vocab
                                                      << "-token vocabulary, or -1 to ignore it");
  for (std::size_t i = 0; i < n; ++i) {
    const T* z = logits + i * vocab_local;
    local_max[i] = *std::max_element(z, z + vocab_local);
  }
  comm.all_gather(local_max, all_max, n);
  for (std::size_t i = 0; i < n; ++i) {
    T m = -std::numeric_limits<T>::infinity();
    for (std::size_t r = 0; r < t; ++r) m = std::max(m, all_max[r * n + i]);
    local_max[i] = m;  // now the maximum over the whole vocabulary
    const T* z = logits + i * vocab_local;
    T* p = probs + i * vocab_local;
    T sum = 0;
    for (int v = 0; v < vocab_local; ++v) sum += (p[v] = std::exp(z[v] - m));
    sums[i] = sum;
    const int local_target = targets[i] - vocab_begin;
    sums[n + i] = targets[i] >= 0 && local_target >= 0 && local_target < vocab_local
                      ? z[local_target] - m
                      : T(0);
  }
  comm.all_reduce(sums, 2 * n);
  T total = 0;
  int counted = 0;
  for (std::size_t i = 0; i < n; ++i) {
    T* p = probs + i * vocab_local;
    for (int v = 0; v < vocab_local; ++v) p[v] /= sums[i];
    if (targets[i] < 0) continue;
    total += std::log(sums[i]) - sums[n + i];  // −log softmax, from the logits
    ++counted;
  }
  return counted ? total / counted : T(0);
}

template <typename T>
void parallel_cross_entropy_backward(const T* probs, const int* targets, int rows, int vocab_local,
                                     int vocab_begin, T scale, T* dlogits) {
  int counted = 0;
  for (int i = 0; i < rows; ++i) counted += targets[i] >= 0;
  const T factor = counted ? scale / counted : T(0);
  for (int i = 0; i < rows; ++i) {
    const T* p = probs + static_cast<std::size_t>(i) * vocab_local;
    T* d = dlogits + static_cast<std::size_t>(i) * vocab_local;
    for (int v = 0; v < vocab_local; ++v) {
      const bool is_target = targets[i] >= 0 && targets[i] - vocab_begin == v;
      d[v] = targets[i] < 0 ? T(0) : factor * (p[v] - (is_target ? T(1) : T(0)));
    }
  }
}
//! [parallel_cross_entropy]

#define BOOK_TP_CROSS_ENTROPY(T)                                                            \
  template T parallel_cross_entropy_forward<T>(const T*, const int*, int, int, int, T*, T*, \
                                               TensorParallelComm<T>&);                     \
  template void parallel_cross_entropy_backward<T>(const T*, const int*, int, int, int, T, T*);

BOOK_TP_CROSS_ENTROPY(float)
BOOK_TP_CROSS_ENTROPY(double)

}  // namespace book::tp
