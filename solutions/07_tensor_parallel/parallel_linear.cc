// Reference solutions of tp.column_parallel_linear and tp.row_parallel_linear: chapter 4's
// linear layer on this rank's shard, with the conjugate operators around it.
#include <span>

#include "chapters/04_training_baseline/layers.h"
#include "chapters/07_tensor_parallel/parallel_linear.h"

namespace book::tp {

//! [column_parallel_linear]
template <typename T>
void column_parallel_linear_forward(const LinearShard<T>& shard, const T* x, int rows, T* y) {
  // f's forward is the identity: x is already whole on every rank.
  train::linear_forward(x, rows, shard.in, shard.w, shard.out, shard.bias, shard.out, y, shard.out);
}

template <typename T>
void column_parallel_linear_backward(const LinearShard<T>& shard, const LinearShardGrad<T>& grad,
                                     const T* x, const T* dy, int rows, T* dx,
                                     TensorParallelComm<T>& comm,
                                     SequenceParallel sequence_parallel) {
  const std::span<T> d_input(dx, static_cast<std::size_t>(rows) * shard.in);
  std::fill(d_input.begin(), d_input.end(), T(0));
  train::linear_backward(dy, shard.out, x, rows, shard.in, shard.w, shard.out, shard.out, dx,
                         grad.w, grad.bias);
  // The input fed every rank's columns: its gradient is the sum of every rank's part.
  if (sequence_parallel == SequenceParallel::kOff) f_backward(d_input, comm);
}
//! [column_parallel_linear]

//! [row_parallel_linear]
template <typename T>
void row_parallel_linear_forward(const LinearShard<T>& shard, const T* x, int rows, T* partial,
                                 T* y, TensorParallelComm<T>& comm,
                                 SequenceParallel sequence_parallel) {
  const std::size_t whole = static_cast<std::size_t>(rows) * shard.out;
  train::linear_forward(x, rows, shard.in, shard.w, shard.out, static_cast<const T*>(nullptr),
                        shard.out, partial, shard.out);
  int rows_here = rows;
  if (sequence_parallel == SequenceParallel::kOff) {
    g_forward(std::span<T>(partial, whole), comm);
    std::copy(partial, partial + whole, y);
  } else {
    rows_here = rows / comm.size();
    scatter_forward(std::span<const T>(partial, whole),
                    std::span<T>(y, static_cast<std::size_t>(rows_here) * shard.out), comm);
  }
  // The replicated bias, once, after the sum.
  if (shard.bias != nullptr)
    for (int i = 0; i < rows_here; ++i)
      for (int j = 0; j < shard.out; ++j)
        y[static_cast<std::size_t>(i) * shard.out + j] += shard.bias[j];
}

template <typename T>
void row_parallel_linear_backward(const LinearShard<T>& shard, const LinearShardGrad<T>& grad,
                                  const T* x, const T* dy, int rows, T* dy_whole, T* dx,
                                  TensorParallelComm<T>& comm, SequenceParallel sequence_parallel) {
  const std::size_t whole = static_cast<std::size_t>(rows) * shard.out;
  const T* d_output = dy;  // off: g's backward is the identity
  int rows_here = rows;
  if (sequence_parallel == SequenceParallel::kOn) {
    rows_here = rows / comm.size();
    scatter_backward(std::span<const T>(dy, static_cast<std::size_t>(rows_here) * shard.out),
                     std::span<T>(dy_whole, whole), comm);
    d_output = dy_whole;
  } else {
    g_backward(std::span<const T>(dy, whole), comm);
  }
  std::fill(dx, dx + static_cast<std::size_t>(rows) * shard.in, T(0));
  train::linear_backward(d_output, shard.out, x, rows, shard.in, shard.w, shard.out, shard.out, dx,
                         grad.w, static_cast<T*>(nullptr));
  // The bias gradient from the rows this rank was given (on: a partial sum over tokens).
  if (grad.bias != nullptr)
    for (int i = 0; i < rows_here; ++i)
      for (int j = 0; j < shard.out; ++j)
        grad.bias[j] += dy[static_cast<std::size_t>(i) * shard.out + j];
}
//! [row_parallel_linear]

#define BOOK_TP_LINEAR(T)                                                                         \
  template void column_parallel_linear_forward<T>(const LinearShard<T>&, const T*, int, T*);      \
  template void column_parallel_linear_backward<T>(                                               \
      const LinearShard<T>&, const LinearShardGrad<T>&, const T*, const T*, int, T*,              \
      TensorParallelComm<T>&, SequenceParallel);                                                  \
  template void row_parallel_linear_forward<T>(const LinearShard<T>&, const T*, int, T*, T*,      \
                                               TensorParallelComm<T>&, SequenceParallel);         \
  template void row_parallel_linear_backward<T>(const LinearShard<T>&, const LinearShardGrad<T>&, \
                                                const T*, const T*, int, T*, T*,                  \
                                                TensorParallelComm<T>&, SequenceParallel);

BOOK_TP_LINEAR(float)
BOOK_TP_LINEAR(double)

}  // namespace book::tp
