// Reference solution of tp.sequence_parallel_norm: LayerNorm on this rank's tokens, then the
// gather; backward, the gather's conjugate (a reduce-scatter), then LayerNorm's backward.
#include <span>

#include "chapters/04_training_baseline/layers.h"
#include "chapters/07_tensor_parallel/conjugate.h"
#include "chapters/07_tensor_parallel/sequence_parallel_norm.h"

namespace book::tp {

//! [sequence_parallel_norm]
template <typename T>
void sequence_parallel_norm_forward(const T* x_shard, const T* gain, const T* bias,
                                    int rows_per_rank, int channels, T* ln_shard, T* mean, T* rstd,
                                    T* whole, TensorParallelComm<T>& comm) {
  const std::size_t shard = static_cast<std::size_t>(rows_per_rank) * channels;
  train::layernorm_forward(x_shard, gain, bias, rows_per_rank, channels, ln_shard, mean, rstd);
  gather_forward(std::span<const T>(ln_shard, shard),
                 std::span<T>(whole, shard * static_cast<std::size_t>(comm.size())), comm);
}

template <typename T>
void sequence_parallel_norm_backward(const T* d_whole, const T* x_shard, const T* gain,
                                     const T* mean, const T* rstd, int rows_per_rank, int channels,
                                     T* d_shard, T* dx_shard, T* dgain, T* dbias,
                                     TensorParallelComm<T>& comm) {
  const std::size_t shard = static_cast<std::size_t>(rows_per_rank) * channels;
  gather_backward(std::span<const T>(d_whole, shard * static_cast<std::size_t>(comm.size())),
                  std::span<T>(d_shard, shard), comm);
  train::layernorm_backward(d_shard, x_shard, gain, mean, rstd, rows_per_rank, channels, dx_shard,
                            dgain, dbias);
}
//! [sequence_parallel_norm]

#define BOOK_TP_SP_NORM(T)                                                                        \
  template void sequence_parallel_norm_forward<T>(const T*, const T*, const T*, int, int, T*, T*, \
                                                  T*, T*, TensorParallelComm<T>&);                \
  template void sequence_parallel_norm_backward<T>(const T*, const T*, const T*, const T*,        \
                                                   const T*, int, int, T*, T*, T*, T*,            \
                                                   TensorParallelComm<T>&);

BOOK_TP_SP_NORM(float)
BOOK_TP_SP_NORM(double)

}  // namespace book::tp
