#include "chapters/07_tensor_parallel/vocab_parallel.h"

#include <algorithm>
#include <cstdint>
#include <span>

#include "common/check.h"

namespace book::tp {

//! [vocab_parallel_embedding]
template <typename T>
void vocab_parallel_embedding_forward(const int* tokens, int batch, int seq_len,
                                      const VocabularyShard<T>& shard, const T* wpe, int channels,
                                      T* partial, T* out, TensorParallelComm<T>& comm,
                                      SequenceParallel sequence_parallel) {
  const std::size_t n = static_cast<std::size_t>(batch) * seq_len, c = channels;
  // An id outside the vocabulary is on no rank: every rank would add zeros for it, silently.
  // Every rank sees the same ids, so every rank refuses before the all-reduce.
  const std::int64_t vocab = static_cast<std::int64_t>(shard.rows) * comm.size();
  for (std::size_t i = 0; i < n; ++i)
    BOOK_CHECK(tokens[i] >= 0 && tokens[i] < vocab, "vocab_parallel_embedding_forward: token "
                                                        << i << " is id " << tokens[i]
                                                        << ", outside the vocabulary of " << vocab
                                                        << " ids");
  for (std::size_t i = 0; i < n; ++i) {
    T* row = partial + i * c;
    const int local = tokens[i] - shard.begin;
    if (local >= 0 && local < shard.rows)
      std::copy(shard.wte + local * c, shard.wte + (local + 1) * c, row);
    else
      std::fill(row, row + c, T(0));  // another rank's token
    if (comm.rank() == 0) {           // the replicated position embedding, counted once
      const T* position = wpe + (i % seq_len) * c;
      for (std::size_t j = 0; j < c; ++j) row[j] += position[j];
    }
  }
  if (sequence_parallel == SequenceParallel::kOff) {
    g_forward(std::span<T>(partial, n * c), comm);
    std::copy(partial, partial + n * c, out);
  } else {
    scatter_forward(std::span<const T>(partial, n * c), std::span<T>(out, n * c / comm.size()),
                    comm);
  }
}
//! [vocab_parallel_embedding]

template <typename T>
void vocab_parallel_embedding_backward(const int* tokens, int batch, int seq_len,
                                       const VocabularyShard<T>& shard, const T* d_out,
                                       int channels, T* d_whole, T* dwte, T* dwpe,
                                       TensorParallelComm<T>& comm,
                                       SequenceParallel sequence_parallel) {
  const std::size_t n = static_cast<std::size_t>(batch) * seq_len, c = channels;
  const T* d = d_out;
  if (sequence_parallel == SequenceParallel::kOn) {
    scatter_backward(std::span<const T>(d_out, n * c / comm.size()), std::span<T>(d_whole, n * c),
                     comm);
    d = d_whole;
  } else {
    g_backward(std::span<const T>(d_out, n * c), comm);
  }
  for (std::size_t i = 0; i < n; ++i) {
    const T* row = d + i * c;
    const int local = tokens[i] - shard.begin;
    if (local >= 0 && local < shard.rows)
      for (std::size_t j = 0; j < c; ++j) dwte[local * c + j] += row[j];
    T* position = dwpe + (i % seq_len) * c;
    for (std::size_t j = 0; j < c; ++j) position[j] += row[j];
  }
}

#define BOOK_TP_VOCAB(T)                                                                           \
  template void vocab_parallel_embedding_forward<T>(const int*, int, int,                          \
                                                    const VocabularyShard<T>&, const T*, int, T*,  \
                                                    T*, TensorParallelComm<T>&, SequenceParallel); \
  template void vocab_parallel_embedding_backward<T>(                                              \
      const int*, int, int, const VocabularyShard<T>&, const T*, int, T*, T*, T*,                  \
      TensorParallelComm<T>&, SequenceParallel);

BOOK_TP_VOCAB(float)
BOOK_TP_VOCAB(double)

}  // namespace book::tp
