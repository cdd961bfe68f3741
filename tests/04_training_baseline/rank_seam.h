// A tensor-parallel seam for tests that only build model parts: it names a rank of a group and
// refuses every pass (the passes of a tensor-parallel rank are tested where a seam that
// communicates is built).
#pragma once

#include <cstddef>
#include <span>

#include "chapters/04_training_baseline/tensor_parallelism.h"
#include "common/check.h"

namespace book::train::testing {

/// Rank `rank` of `size`: every row held, every pass a book::Error.
template <typename T>
class RankSeam final : public TensorParallelism<T> {
 public:
  RankSeam(int rank, int size) : rank_(rank), size_(size) {}
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int held_rows(int rows) const override { return rows; }
  std::size_t held_room(std::size_t rows) const override { return rows; }
  const T* norm_forward(const T*, const T*, const T*, int, int, T*, T*, T*) override { refuse(); }
  const T* whole_rows(const T*, int, int) override { refuse(); }
  void complete_input_gradient(T*, int, int) override { refuse(); }
  void norm_backward(const T*, const T*, const T*, const T*, const T*, int, int, T*, T*,
                     T*) override {
    refuse();
  }
  void column_forward(const ProjectionWeights<T>&, const T*, int, T*) override { refuse(); }
  void column_backward(const ProjectionWeights<T>&, const ProjectionGrads<T>&, const T*, const T*,
                       int, T*) override {
    refuse();
  }
  void row_forward(const ProjectionWeights<T>&, const T*, int, T*) override { refuse(); }
  void row_backward(const ProjectionWeights<T>&, const ProjectionGrads<T>&, const T*, const T*, int,
                    T*) override {
    refuse();
  }
  void embedding_forward(const int*, int, int, const T*, int, int, const T*, int, T*) override {
    refuse();
  }
  void embedding_backward(const int*, int, int, int, int, const T*, int, T*, T*) override {
    refuse();
  }
  T cross_entropy_forward(const T*, const int*, int, int, int, T*) override { refuse(); }
  void cross_entropy_backward(const T*, const int*, int, int, int, T, T*) override { refuse(); }
  void finish_gradients(const ParameterLayout&, std::span<T>) override { refuse(); }

 private:
  [[noreturn]] static void refuse() {
    ::book::detail::fail(__FILE__, __LINE__,
                         "RankSeam: this test seam only names a rank; it runs no pass");
  }
  int rank_, size_;
};

}  // namespace book::train::testing
