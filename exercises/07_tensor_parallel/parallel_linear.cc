// Exercises tp.column_parallel_linear and tp.row_parallel_linear: replace each
// BOOK_NOT_IMPLEMENTED with the layer. The contracts are in
// chapters/07_tensor_parallel/parallel_linear.h. Build each from chapter 4's linear_forward and
// linear_backward (chapters/04_training_baseline/layers.h) on this rank's shard, and put the
// operators of chapters/07_tensor_parallel/conjugate.h around it: the column layer's backward
// ends with f_backward (sequence parallelism off); the row layer's forward ends with g_forward
// (off) or scatter_forward (on), its backward starts with scatter_backward (on). Add the row
// layer's bias after the reduction, and remember that a backward that all-reduces dx must start
// from zero.
#include "chapters/07_tensor_parallel/parallel_linear.h"
#include "common/check.h"

namespace book::tp {

namespace {
constexpr const char* kReadme =
    "chapters/07_tensor_parallel/README.md, section The column/row split";
}

template <typename T>
void column_parallel_linear_forward(const LinearShard<T>& shard, const T* x, int rows, T* y) {
  (void)shard, (void)x, (void)rows, (void)y;
  BOOK_NOT_IMPLEMENTED("tp.column_parallel_linear",
                       "exercises/07_tensor_parallel/parallel_linear.cc", kReadme);
}

template <typename T>
void column_parallel_linear_backward(const LinearShard<T>& shard, const LinearShardGrad<T>& grad,
                                     const T* x, const T* dy, int rows, T* dx,
                                     TensorParallelComm<T>& comm,
                                     SequenceParallel sequence_parallel) {
  (void)shard, (void)grad, (void)x, (void)dy, (void)rows, (void)dx, (void)comm;
  (void)sequence_parallel;
  BOOK_NOT_IMPLEMENTED("tp.column_parallel_linear",
                       "exercises/07_tensor_parallel/parallel_linear.cc", kReadme);
}

template <typename T>
void row_parallel_linear_forward(const LinearShard<T>& shard, const T* x, int rows, T* partial,
                                 T* y, TensorParallelComm<T>& comm,
                                 SequenceParallel sequence_parallel) {
  (void)shard, (void)x, (void)rows, (void)partial, (void)y, (void)comm, (void)sequence_parallel;
  BOOK_NOT_IMPLEMENTED("tp.row_parallel_linear", "exercises/07_tensor_parallel/parallel_linear.cc",
                       kReadme);
}

template <typename T>
void row_parallel_linear_backward(const LinearShard<T>& shard, const LinearShardGrad<T>& grad,
                                  const T* x, const T* dy, int rows, T* dy_whole, T* dx,
                                  TensorParallelComm<T>& comm, SequenceParallel sequence_parallel) {
  (void)shard, (void)grad, (void)x, (void)dy, (void)rows, (void)dy_whole, (void)dx, (void)comm;
  (void)sequence_parallel;
  BOOK_NOT_IMPLEMENTED("tp.row_parallel_linear", "exercises/07_tensor_parallel/parallel_linear.cc",
                       kReadme);
}

// Both instantiations: training uses float, the tests double.
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
