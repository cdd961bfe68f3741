// Exercise tp.parallel_cross_entropy: replace each BOOK_NOT_IMPLEMENTED. The contract is in
// chapters/07_tensor_parallel/parallel_cross_entropy.h. Forward: first refuse any target that
// is neither -1 nor an id below t · vocab_local (a book::Error naming the row); per row: this
// rank's maximum;
// comm.all_gather of the maxima (scratch[0, rows) in, scratch[rows, rows + t·rows) out) and the
// largest of the t; exp(z − max) into probs and its sum; the target's z − max if this rank holds
// the target, else 0; one comm.all_reduce of those 2·rows numbers; then probs /= the sum and the
// loss log(sum) − (z_target − max), averaged over rows whose target is not −1. Backward: chapter
// 4's cross_entropy_backward with the one-hot shifted by vocab_begin.
#include "chapters/07_tensor_parallel/parallel_cross_entropy.h"
#include "common/check.h"

namespace book::tp {

template <typename T>
T parallel_cross_entropy_forward(const T* logits, const int* targets, int rows, int vocab_local,
                                 int vocab_begin, T* probs, T* scratch,
                                 TensorParallelComm<T>& comm) {
  (void)logits, (void)targets, (void)rows, (void)vocab_local, (void)vocab_begin, (void)probs;
  (void)scratch, (void)comm;
  BOOK_NOT_IMPLEMENTED(
      "tp.parallel_cross_entropy", "exercises/07_tensor_parallel/parallel_cross_entropy.cc",
      "chapters/07_tensor_parallel/README.md, section The vocabulary-parallel head");
}

template <typename T>
void parallel_cross_entropy_backward(const T* probs, const int* targets, int rows, int vocab_local,
                                     int vocab_begin, T scale, T* dlogits) {
  (void)probs, (void)targets, (void)rows, (void)vocab_local, (void)vocab_begin, (void)scale;
  (void)dlogits;
  BOOK_NOT_IMPLEMENTED(
      "tp.parallel_cross_entropy", "exercises/07_tensor_parallel/parallel_cross_entropy.cc",
      "chapters/07_tensor_parallel/README.md, section The vocabulary-parallel head");
}

#define BOOK_TP_CROSS_ENTROPY(T)                                                            \
  template T parallel_cross_entropy_forward<T>(const T*, const int*, int, int, int, T*, T*, \
                                               TensorParallelComm<T>&);                     \
  template void parallel_cross_entropy_backward<T>(const T*, const int*, int, int, int, T, T*);

BOOK_TP_CROSS_ENTROPY(float)
BOOK_TP_CROSS_ENTROPY(double)

}  // namespace book::tp
