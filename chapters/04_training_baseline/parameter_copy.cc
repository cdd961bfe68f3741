#include "chapters/04_training_baseline/parameter_copy.h"

#include <cstring>

#include "common/check.h"

namespace book::train {
namespace {

void check_pair(const ParameterLayout& whole, std::size_t whole_size, const ParameterLayout& part,
                std::size_t part_size, const char* who) {
  BOOK_CHECK(whole.part().is_whole(whole.config()),
             who << ": the first layout must be the whole model on one device, got layers "
                 << whole.part().first_layer << ".." << whole.part().last_layer - 1
                 << " and tensor-parallel size " << whole.part().tensor_parallel.size);
  BOOK_CHECK(std::memcmp(&whole.config(), &part.config(), sizeof(Config)) == 0,
             who << ": the two layouts are of different model configs");
  BOOK_CHECK(whole_size == whole.total() && part_size == part.total(),
             who << ": buffers of " << whole_size << " and " << part_size
                 << " elements for layouts of " << whole.total() << " and " << part.total());
}

// Calls fn(part element index, whole element index) for every element `part` holds.
template <typename Fn>
void for_each_element(const ParameterLayout& whole, const ParameterLayout& part, Fn fn) {
  const TensorParallelSlice& slice = part.part().tensor_parallel;
  for (const TensorSlot& p : part.slots()) {
    const TensorSlot& w = whole.find(p.name);
    for (std::size_t r = 0; r < p.rows; ++r)
      for (std::size_t c = 0; c < p.cols; ++c)
        fn(p.offset + r * p.cols + c, w.offset + whole_index(w, p, slice, r, c));
  }
}

}  // namespace

std::size_t whole_index(const TensorSlot& whole_slot, const TensorSlot& part_slot,
                        const TensorParallelSlice& slice, std::size_t row, std::size_t col) {
  switch (part_slot.split) {
    case TensorParallelSplit::kReplicated:
      return row * whole_slot.cols + col;
    case TensorParallelSplit::kRows:
      return (slice.rank * part_slot.rows + row) * whole_slot.cols + col;
    case TensorParallelSplit::kColumns: {
      // Each column group (q, k, v of W_qkv) is split on its own: this rank's columns of group g
      // sit at g · group width + rank · its share.
      const std::size_t part_group = part_slot.cols / part_slot.column_groups,
                        whole_group = whole_slot.cols / part_slot.column_groups;
      const std::size_t group = col / part_group, within = col % part_group;
      return row * whole_slot.cols + group * whole_group + slice.rank * part_group + within;
    }
  }
  return 0;
}

template <typename T>
void copy_from_whole(const ParameterLayout& whole, std::span<const T> whole_data,
                     const ParameterLayout& part, std::span<T> part_data) {
  check_pair(whole, whole_data.size(), part, part_data.size(), "copy_from_whole");
  for_each_element(whole, part,
                   [&](std::size_t p, std::size_t w) { part_data[p] = whole_data[w]; });
}

template <typename T>
void copy_to_whole(const ParameterLayout& part, std::span<const T> part_data,
                   const ParameterLayout& whole, std::span<T> whole_data) {
  check_pair(whole, whole_data.size(), part, part_data.size(), "copy_to_whole");
  for_each_element(whole, part,
                   [&](std::size_t p, std::size_t w) { whole_data[w] = part_data[p]; });
}

template void copy_from_whole<float>(const ParameterLayout&, std::span<const float>,
                                     const ParameterLayout&, std::span<float>);
template void copy_from_whole<double>(const ParameterLayout&, std::span<const double>,
                                      const ParameterLayout&, std::span<double>);
template void copy_to_whole<float>(const ParameterLayout&, std::span<const float>,
                                   const ParameterLayout&, std::span<float>);
template void copy_to_whole<double>(const ParameterLayout&, std::span<const double>,
                                    const ParameterLayout&, std::span<double>);

}  // namespace book::train
