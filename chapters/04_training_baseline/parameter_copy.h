/// @file
/// Moving tensors between the whole model's flat buffer and a part's (a pipeline stage, a
/// tensor-parallel rank's slices, or both), by tensor name.
///
/// A parallel run starts from exactly the one-device initialisation by copying each rank's part
/// out of the whole model's parameters (copy_from_whole), and a test compares a part's
/// gradients with the whole model's by copying them back into place (copy_to_whole).
#pragma once

#include <span>

#include "chapters/04_training_baseline/parameters.h"

namespace book::train {

/// Copies into `part_data` (a buffer of layout `part`) every tensor `part` holds, taken from
/// `whole_data` (a buffer of layout `whole`, which must be the whole model of the same config):
/// replicated tensors whole, column-split tensors this rank's columns (of each column group),
/// row-split tensors its rows. Throws book::Error on a size or config mismatch.
template <typename T>
void copy_from_whole(const ParameterLayout& whole, std::span<const T> whole_data,
                     const ParameterLayout& part, std::span<T> part_data);

/// The reverse: writes every element of `part_data` to its place in `whole_data`, leaving the
/// elements the part does not hold untouched.
template <typename T>
void copy_to_whole(const ParameterLayout& part, std::span<const T> part_data,
                   const ParameterLayout& whole, std::span<T> whole_data);

/// The element of the whole tensor `whole_slot` that element (row, col) of the part's tensor
/// `part_slot` is, for tensor-parallel slice `slice`, as an index into the whole tensor
/// (row-major, from 0). Used by the two copies and by Model::init.
std::size_t whole_index(const TensorSlot& whole_slot, const TensorSlot& part_slot,
                        const TensorParallelSlice& slice, std::size_t row, std::size_t col);

}  // namespace book::train
