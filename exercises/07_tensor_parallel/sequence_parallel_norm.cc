// Exercise tp.sequence_parallel_norm: replace each BOOK_NOT_IMPLEMENTED. The contract is in
// chapters/07_tensor_parallel/sequence_parallel_norm.h. Forward: chapter 4's layernorm_forward
// on this rank's rows (chapters/04_training_baseline/layers.h), then gather_forward
// (chapters/07_tensor_parallel/conjugate.h). Backward: gather_backward into d_shard, then
// chapter 4's layernorm_backward on this rank's rows (it adds into dx_shard, dgain and dbias).
#include "chapters/07_tensor_parallel/sequence_parallel_norm.h"
#include "common/check.h"

namespace book::tp {

template <typename T>
void sequence_parallel_norm_forward(const T* x_shard, const T* gain, const T* bias,
                                    int rows_per_rank, int channels, T* ln_shard, T* mean, T* rstd,
                                    T* whole, TensorParallelComm<T>& comm) {
  (void)x_shard, (void)gain, (void)bias, (void)rows_per_rank, (void)channels, (void)ln_shard;
  (void)mean, (void)rstd, (void)whole, (void)comm;
  BOOK_NOT_IMPLEMENTED("tp.sequence_parallel_norm",
                       "exercises/07_tensor_parallel/sequence_parallel_norm.cc",
                       "chapters/07_tensor_parallel/README.md, section Sequence parallelism");
}

template <typename T>
void sequence_parallel_norm_backward(const T* d_whole, const T* x_shard, const T* gain,
                                     const T* mean, const T* rstd, int rows_per_rank, int channels,
                                     T* d_shard, T* dx_shard, T* dgain, T* dbias,
                                     TensorParallelComm<T>& comm) {
  (void)d_whole, (void)x_shard, (void)gain, (void)mean, (void)rstd, (void)rows_per_rank;
  (void)channels, (void)d_shard, (void)dx_shard, (void)dgain, (void)dbias, (void)comm;
  BOOK_NOT_IMPLEMENTED("tp.sequence_parallel_norm",
                       "exercises/07_tensor_parallel/sequence_parallel_norm.cc",
                       "chapters/07_tensor_parallel/README.md, section Sequence parallelism");
}

#define BOOK_TP_SP_NORM(T)                                                                        \
  template void sequence_parallel_norm_forward<T>(const T*, const T*, const T*, int, int, T*, T*, \
                                                  T*, T*, TensorParallelComm<T>&);                \
  template void sequence_parallel_norm_backward<T>(const T*, const T*, const T*, const T*,        \
                                                   const T*, int, int, T*, T*, T*, T*,            \
                                                   TensorParallelComm<T>&);

BOOK_TP_SP_NORM(float)
BOOK_TP_SP_NORM(double)

}  // namespace book::tp
