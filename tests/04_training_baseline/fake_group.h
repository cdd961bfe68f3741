// An in-process tensor-parallel group for tests: t ranks as t threads, meeting at a barrier. Each
// collective sums in rank order 0..t-1, so every rank gets the same bits, and counts its calls
// and elements so tests can assert the traffic exactly.
#pragma once

#include <barrier>
#include <cstddef>
#include <memory>
#include <thread>
#include <vector>

#include "chapters/04_training_baseline/tensor_parallel_comm.h"

namespace book::train::testing {

/// Calls and elements of each collective, as seen by one rank.
struct CollectiveCounts {
  int all_reduces = 0, reduce_scatters = 0, all_gathers = 0;
  std::size_t all_reduce_elements = 0;  ///< Σ count over the all-reduces
};

template <typename T>
class FakeGroup {
 public:
  explicit FakeGroup(int size) : size_(size), sync_(size), posted_(size, nullptr) {
    for (int r = 0; r < size; ++r) ranks_.push_back(std::make_unique<Rank>(*this, r));
  }

  /// Rank r's handle (use it from one thread only).
  TensorParallelComm<T>& rank(int r) { return *ranks_[r]; }
  /// What rank r has called so far.
  const CollectiveCounts& counts(int r) const { return ranks_[r]->counts; }

  /// Runs body(r) on t threads (rank 0 on the calling thread) and joins them.
  template <typename Body>
  void run(Body body) {
    std::vector<std::thread> others;
    for (int r = 1; r < size_; ++r) others.emplace_back([&body, r] { body(r); });
    body(0);
    for (auto& thread : others) thread.join();
  }

 private:
  class Rank : public TensorParallelComm<T> {
   public:
    Rank(FakeGroup& group, int rank) : group_(group), rank_(rank) {}
    int rank() const override { return rank_; }
    int size() const override { return group_.size_; }
    void all_reduce(T* data, std::size_t count) override {
      ++counts.all_reduces;
      counts.all_reduce_elements += count;
      std::vector<T> sum(count, T(0));
      group_.exchange(rank_, data, [&] {
        for (int r = 0; r < group_.size_; ++r)
          for (std::size_t i = 0; i < count; ++i) sum[i] += group_.posted_[r][i];
      });
      std::copy(sum.begin(), sum.end(), data);
    }
    void reduce_scatter(const T* in, T* out, std::size_t count_per_rank) override {
      ++counts.reduce_scatters;
      std::vector<T> sum(count_per_rank, T(0));
      group_.exchange(rank_, in, [&] {
        for (int r = 0; r < group_.size_; ++r)
          for (std::size_t i = 0; i < count_per_rank; ++i)
            sum[i] += group_.posted_[r][rank_ * count_per_rank + i];
      });
      std::copy(sum.begin(), sum.end(), out);
    }
    void all_gather(const T* in, T* out, std::size_t count_per_rank) override {
      ++counts.all_gathers;
      std::vector<T> gathered(group_.size_ * count_per_rank);
      group_.exchange(rank_, in, [&] {
        for (int r = 0; r < group_.size_; ++r)
          std::copy(group_.posted_[r], group_.posted_[r] + count_per_rank,
                    gathered.begin() + r * count_per_rank);
      });
      std::copy(gathered.begin(), gathered.end(), out);
    }
    CollectiveCounts counts;

   private:
    FakeGroup& group_;
    int rank_;
  };

  // Posts this rank's input, waits for all, reads everyone's, waits again so no rank overwrites
  // its input (an in-place all-reduce) before every rank has read it.
  template <typename Read>
  void exchange(int rank, const T* input, Read read) {
    posted_[rank] = input;
    sync_.arrive_and_wait();
    read();
    sync_.arrive_and_wait();
  }

  int size_;
  std::barrier<> sync_;
  std::vector<const T*> posted_;
  std::vector<std::unique_ptr<Rank>> ranks_;
};

}  // namespace book::train::testing
