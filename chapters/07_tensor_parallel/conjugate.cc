#include "chapters/07_tensor_parallel/conjugate.h"

#include "common/check.h"

namespace book::tp {
namespace {

// The whole buffer of a gather or scatter holds exactly t shards.
void check_shards(const char* who, std::size_t shard, std::size_t whole, int ranks) {
  BOOK_CHECK(whole == shard * static_cast<std::size_t>(ranks),
             who << ": the whole buffer has " << whole << " elements, but " << ranks
                 << " shards of " << shard << " make " << shard * static_cast<std::size_t>(ranks));
}

}  // namespace

const char* sequence_parallel_name(SequenceParallel sequence_parallel) {
  return sequence_parallel == SequenceParallel::kOn ? "on" : "off";
}

//! [conjugate_operators]
template <typename T>
void f_forward(std::span<const T>, TensorParallelComm<T>&) {}

template <typename T>
void f_backward(std::span<T> dx, TensorParallelComm<T>& comm) {
  comm.all_reduce(dx.data(), dx.size());
}

template <typename T>
void g_forward(std::span<T> y, TensorParallelComm<T>& comm) {
  comm.all_reduce(y.data(), y.size());
}

template <typename T>
void g_backward(std::span<const T>, TensorParallelComm<T>&) {}
//! [conjugate_operators]

//! [sequence_operators]
template <typename T>
void gather_forward(std::span<const T> shard, std::span<T> whole, TensorParallelComm<T>& comm) {
  check_shards("gather_forward", shard.size(), whole.size(), comm.size());
  comm.all_gather(shard.data(), whole.data(), shard.size());
}

template <typename T>
void gather_backward(std::span<const T> d_whole, std::span<T> d_shard,
                     TensorParallelComm<T>& comm) {
  check_shards("gather_backward", d_shard.size(), d_whole.size(), comm.size());
  comm.reduce_scatter(d_whole.data(), d_shard.data(), d_shard.size());
}

template <typename T>
void scatter_forward(std::span<const T> partial, std::span<T> shard, TensorParallelComm<T>& comm) {
  check_shards("scatter_forward", shard.size(), partial.size(), comm.size());
  comm.reduce_scatter(partial.data(), shard.data(), shard.size());
}

template <typename T>
void scatter_backward(std::span<const T> d_shard, std::span<T> d_whole,
                      TensorParallelComm<T>& comm) {
  check_shards("scatter_backward", d_shard.size(), d_whole.size(), comm.size());
  comm.all_gather(d_shard.data(), d_whole.data(), d_shard.size());
}
//! [sequence_operators]

#define BOOK_TP_CONJUGATE(T)                                                                  \
  template void f_forward<T>(std::span<const T>, TensorParallelComm<T>&);                     \
  template void f_backward<T>(std::span<T>, TensorParallelComm<T>&);                          \
  template void g_forward<T>(std::span<T>, TensorParallelComm<T>&);                           \
  template void g_backward<T>(std::span<const T>, TensorParallelComm<T>&);                    \
  template void gather_forward<T>(std::span<const T>, std::span<T>, TensorParallelComm<T>&);  \
  template void gather_backward<T>(std::span<const T>, std::span<T>, TensorParallelComm<T>&); \
  template void scatter_forward<T>(std::span<const T>, std::span<T>, TensorParallelComm<T>&); \
  template void scatter_backward<T>(std::span<const T>, std::span<T>, TensorParallelComm<T>&);

BOOK_TP_CONJUGATE(float)
BOOK_TP_CONJUGATE(double)

}  // namespace book::tp
