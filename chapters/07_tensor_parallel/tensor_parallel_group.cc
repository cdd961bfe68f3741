#include "chapters/07_tensor_parallel/tensor_parallel_group.h"

#include <algorithm>
#include <span>

namespace book::tp {

CollectiveCounts CollectiveCounts::since(const CollectiveCounts& earlier) const {
  return {all_reduces - earlier.all_reduces,
          reduce_scatters - earlier.reduce_scatters,
          all_gathers - earlier.all_gathers,
          all_reduce_elements - earlier.all_reduce_elements,
          reduce_scatter_elements - earlier.reduce_scatter_elements,
          all_gather_elements - earlier.all_gather_elements};
}

template <typename T>
TensorParallelGroup<T>::TensorParallelGroup(coll::Communicator& comm, coll::Algorithm algorithm)
    : comm_(comm), algorithm_(algorithm) {}

template <typename T>
void TensorParallelGroup<T>::all_reduce(T* data, std::size_t count) {
  ++counts_.all_reduces;
  counts_.all_reduce_elements += count;
  comm_.all_reduce(std::span<T>(data, count), coll::ReduceOp::kSum, algorithm_);
}

// Reduce-scatter and all-gather have no tree: a tree or fused-ring group uses the ring for them.
namespace {
coll::Algorithm for_shards(coll::Algorithm algorithm) {
  using coll::Algorithm;
  return algorithm == Algorithm::kTree || algorithm == Algorithm::kRingFused ||
                 algorithm == Algorithm::kAutomatic
             ? Algorithm::kRing
             : algorithm;
}
}  // namespace

template <typename T>
void TensorParallelGroup<T>::reduce_scatter(const T* in, T* out, std::size_t count_per_rank) {
  const std::size_t total = count_per_rank * static_cast<std::size_t>(size());
  ++counts_.reduce_scatters;
  counts_.reduce_scatter_elements += total;
  comm_.reduce_scatter(std::span<const T>(in, total), std::span<T>(out, count_per_rank),
                       coll::ReduceOp::kSum, for_shards(algorithm_));
}

template <typename T>
void TensorParallelGroup<T>::all_gather(const T* in, T* out, std::size_t count_per_rank) {
  const std::size_t total = count_per_rank * static_cast<std::size_t>(size());
  ++counts_.all_gathers;
  counts_.all_gather_elements += total;
  comm_.all_gather(std::span<const T>(in, count_per_rank), std::span<T>(out, total),
                   for_shards(algorithm_));
}

template <typename T>
void LocalGroup<T>::reduce_scatter(const T* in, T* out, std::size_t count) {
  std::copy(in, in + count, out);
}

template <typename T>
void LocalGroup<T>::all_gather(const T* in, T* out, std::size_t count) {
  std::copy(in, in + count, out);
}

template class LocalGroup<float>;
template class LocalGroup<double>;
template class TensorParallelGroup<float>;
template class TensorParallelGroup<double>;

}  // namespace book::tp
